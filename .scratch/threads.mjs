import { readdirSync, readFileSync } from "node:fs";
const [tree, factory, args, n] = process.argv.slice(2);
const v = await import(`${tree}/bench/.build/bench/variants.js`);
const op = await v[factory](...JSON.parse(args));
for (let i = 0; i < 10000; i++) await op();
const snap = () => Object.fromEntries(readdirSync("/proc/self/task").map((t) => { const s = readFileSync(`/proc/self/task/${t}/stat`, "utf8"); const f = s.slice(s.lastIndexOf(")") + 2).split(" "); const name = s.slice(s.indexOf("(") + 1, s.lastIndexOf(")")); return [t, { name, cpu: Number(f[11]) + Number(f[12]) }]; }));
const a = snap(); const t = process.cpuUsage();
for (let i = 0; i < Number(n); i++) await op();
const u = process.cpuUsage(t); const b = snap();
const out = {}; for (const [k, x] of Object.entries(b)) { const d = x.cpu - (a[k]?.cpu ?? 0); if (d) out[k === String(process.pid) ? "main" : "other"] = (out[k === String(process.pid) ? "main" : "other"] ?? 0) + d * 10000 / Number(n); }
console.log(`total ${((u.user + u.system) / Number(n)).toFixed(1)} µs/op`, JSON.stringify(Object.fromEntries(Object.entries(out).map(([k, x]) => [k, x.toFixed(1)]))));
