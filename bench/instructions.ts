// `npm run bench:instructions`: the replay comparisons counted in instructions, which do not move
// with the machine. CPU-time ratios on a shared machine moved up to 2× between fresh sets of the
// same processes (a neighbour's load, caches, frequency); the number of instructions a call
// executes, counted by Valgrind's cachegrind with V8 made deterministic (`--predictable`: compiler
// and collector on the main thread, in a fixed order; fixed hash and random seeds), repeats to
// within about 0.6 % (two runs of (a) stateless at R = 1, warmed as below: 169,860 and 168,784
// instructions per call). It is not the target measure — instructions do not weigh cache misses,
// and garbage is collected on one thread here — but it says whether a change made a call do
// less, and fits what the runtime adds per request and per replayed ask without the machine's noise.
// Needs `valgrind` on the PATH (Debian: apt-get install valgrind). About twelve minutes on 2 cores.
import { execFile } from "node:child_process";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { fitTwo } from "./sections.js";

const run = promisify(execFile);
const here = (f: string) => fileURLToPath(new URL(f, import.meta.url));
const V8_DETERMINISTIC = ["--predictable", "--hash-seed=1", "--random-seed=1"];

interface Variant {
  name: string;
  factory: string;
  args: unknown[];
  rounds: number;
}

const ROUNDS = [1, 10, 30];
const variants: Variant[] = [
  ...ROUNDS.flatMap((rounds) => [
    { name: "a-stateless", factory: "generator", args: [rounds, 0], rounds },
    { name: "b", factory: "handWritten", args: [rounds], rounds },
    { name: "f", factory: "replayFloor", args: [rounds], rounds },
  ]),
  { name: "a-live", factory: "generator", args: [30, null], rounds: 30 },
  { name: "b2", factory: "handWrittenAll", args: [30], rounds: 30 },
];

/** Operations warmed and counted, for about a second of native time each (R + 1 requests per call). */
// Warmed long: with V8 made deterministic the compiler runs when its budgets say, and a shorter
// warm-up (3,000 requests) still counted tiering in the measured calls (243 k at R = 1, 181 k warm).
const opsFor = (rounds: number) => ({ warm: Math.round(12000 / (rounds + 1)), measured: Math.round(8000 / (rounds + 1)) });

async function instructions(v: Variant, ops: number, warm: number): Promise<number> {
  const { stderr } = await run(
    "valgrind",
    [
      "--tool=cachegrind",
      "--cache-sim=no",
      "--cachegrind-out-file=/dev/null",
      process.execPath,
      ...V8_DETERMINISTIC,
      here("./instructions-proc.js"),
      v.factory,
      JSON.stringify(v.args),
      String(warm),
      String(ops),
    ],
    { maxBuffer: 1 << 24 },
  );
  const m = /I\s+refs:\s+([\d,]+)/.exec(stderr);
  if (!m) throw new Error(`no instruction count from valgrind for ${v.name}(${v.args.join(",")}):\n${stderr.slice(-2000)}`);
  return Number(m[1]!.replaceAll(",", ""));
}

async function allocation(v: Variant): Promise<number> {
  const { stdout } = await run(process.execPath, ["--min-semi-space-size=64", "--max-semi-space-size=64", here("./allocation-proc.js"), v.factory, JSON.stringify(v.args)]);
  return Number(stdout.trim());
}

/** Instructions per call: a run that counts `measured` calls after warming, less one that only warms. */
async function perCall(v: Variant): Promise<{ instructions: number; bytes: number }> {
  const { warm, measured } = opsFor(v.rounds);
  const [base, counted] = [await instructions(v, 0, warm), await instructions(v, measured, warm)];
  return { instructions: (counted - base) / measured, bytes: await allocation(v) };
}

try {
  await run("valgrind", ["--version"]);
} catch {
  process.stderr.write("bench:instructions needs valgrind on the PATH (Debian: apt-get install valgrind)\n");
  process.exit(1);
}

const started = Date.now();
const results = new Map<string, { instructions: number; bytes: number }>();
const key = (name: string, rounds: number) => `${name}@${rounds}`;
// As many variants at once as there are cores: instruction counts do not depend on the load.
const queue = [...variants];
await Promise.all(
  Array.from({ length: Math.max(1, os.cpus().length) }, async () => {
    for (let v = queue.shift(); v !== undefined; v = queue.shift()) {
      results.set(key(v.name, v.rounds), await perCall(v));
      process.stderr.write(`  ${v.name} R = ${v.rounds}: ${Math.round(results.get(key(v.name, v.rounds))!.instructions)} instructions per call\n`);
    }
  }),
);
const at = (name: string, rounds: number) => results.get(key(name, rounds))!;
const k = (n: number) => (n / 1000).toFixed(0);
const lines = [
  `Node ${process.version}, V8 ${V8_DETERMINISTIC.join(" ")}, under valgrind's cachegrind; ${new Date().toISOString().slice(0, 10)}; ${Math.round((Date.now() - started) / 1000)} s.`,
  "",
  "| R | (a) stateless | (b) | (f) | a/b | a/f | f/b | allocated per call, KiB: (a) / (b) / (f) |",
  "|---|---|---|---|---|---|---|---|",
  ...ROUNDS.map((r) => {
    const [a, b, f] = [at("a-stateless", r), at("b", r), at("f", r)];
    return `| ${r} | ${k(a.instructions)} k | ${k(b.instructions)} k | ${k(f.instructions)} k | ${(a.instructions / b.instructions).toFixed(3)} | ${(a.instructions / f.instructions).toFixed(3)} | ${(f.instructions / b.instructions).toFixed(3)} | ${(a.bytes / 1024).toFixed(1)} / ${(b.bytes / 1024).toFixed(1)} / ${(f.bytes / 1024).toFixed(1)} |`;
  }),
];
// The same fit as the CPU decomposition: (a) − (f) ≈ perRequest · (R + 1) + perAsk · R(R + 1)/2.
const { p: perRequest, q: perAsk } = fitTwo(ROUNDS.map((r) => ({ x1: r + 1, x2: (r * (r + 1)) / 2, y: at("a-stateless", r).instructions - at("f", r).instructions })));
const live = at("a-live", 30);
const b2 = at("b2", 30);
lines.push(
  "",
  `What the runtime adds to the floor, fitted over R = ${ROUNDS.join(", ")}: ${Math.round(perRequest)} instructions per request and ${Math.round(perAsk)} per replayed ask.`,
  `At R = 30: (a) live ${k(live.instructions)} k instructions per call, a/b ${(live.instructions / at("b", 30).instructions).toFixed(3)}; (b2) ${k(b2.instructions)} k, stateless a/b2 ${(at("a-stateless", 30).instructions / b2.instructions).toFixed(3)}.`,
);
console.log(lines.join("\n"));
