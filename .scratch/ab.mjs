// usage: node ab.mjs '[[tree,factory,args],...]' runs rounds
import { fork } from "node:child_process";
const variants = JSON.parse(process.argv[2]);
const runs = Number(process.argv[3] ?? 5), rounds = Number(process.argv[4] ?? 7);
const med = (a) => { const s = [...a].sort((x, y) => x - y); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
function start(tree, factory, args) {
  const p = fork(`${tree}/bench/.build/bench/proc.js`, [factory, JSON.stringify(args)], { execPath: "taskset", execArgv: ["-c", "1", process.execPath, ...(process.env.NODEFLAGS ?? "").split(" ").filter(Boolean)], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  let waiting; p.on("message", (m) => waiting?.(m));
  const next = () => new Promise((r) => (waiting = r));
  return { p, next, send: (m) => { const n = next(); p.send(m); return n; } };
}
const all = [];
for (let run = 0; run < runs; run++) {
  const procs = [];
  for (const [tree, factory, args] of variants) { const s = start(tree, factory, args); await s.next(); procs.push(s); }
  const ops = [];
  for (const s of procs) ops.push(await s.send({ type: "warm", batchMs: Number(process.env.BATCHMS ?? 150) }));
  const n = Math.min(...ops);
  const costs = procs.map(() => []);
  for (let r = 0; r < rounds; r++) for (let i = 0; i < procs.length; i++) costs[i].push((await procs[i].send({ type: "batch", ops: n })).cpu);
  const m = costs.map(med);
  all.push(m);
  console.log(`run ${run}: ` + m.map((c, i) => `${(c / 1e3).toFixed(1)}µs ${i ? (c / m[0]).toFixed(3) : ""}`).join(" | "));
  for (const s of procs) s.p.send({ type: "exit" });
}
for (let i = 1; i < variants.length; i++) { const r = all.map((m) => m[i] / m[0]); console.log(`v${i}/v0 median ${med(r).toFixed(3)} (${Math.min(...r).toFixed(3)}–${Math.max(...r).toFixed(3)})`); }
