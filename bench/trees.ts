// `npm run bench:trees -- <other checkout>`: this build against another one (an earlier commit,
// say), variant by variant, in the same run. Each pair — the same bench variant on this build
// and on the other — alternates in paired batches in fresh processes pinned to one CPU (the
// harness's method), over `BENCH_RUNS` (default 3) fresh runs; the figure is this build's CPU
// per operation over the other's, median of the runs with their min–max. A refactoring that
// changes no algorithm should read ≈ 1. The other checkout is installed and built first if it
// has not been (`npm ci`, `npm run build`, its bench compiled). `BENCH_PAIRS` picks pairs by name.
// Writes results/trees.json.
import { execSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { PINNED_CPU, ratio, repeated, spreads, unstable, type VariantSpec } from "./harness.js";

const other = process.argv[2];
if (other === undefined) {
  console.error("usage: npm run bench:trees -- <path of another checkout of mcp-yield>");
  process.exit(2);
}
const root = resolve(other);
const otherProc = `${root}/bench/.build/bench/proc.js`;
if (!existsSync(otherProc)) {
  const run = (cmd: string) => execSync(cmd, { cwd: root, stdio: "inherit" });
  if (!existsSync(`${root}/node_modules`)) run("npm ci --no-audit --no-fund");
  run("npm run build && npx tsc -p bench/tsconfig.json");
}
const head = (dir: string) => execSync("git rev-parse --short HEAD", { cwd: dir, encoding: "utf8" }).trim();
const here = fileURLToPath(new URL("../../..", import.meta.url));
const runs = Number(process.env.BENCH_RUNS ?? 3);
const STORE_WARM = 8000;

/** The variants compared: the stateless and live rounds, three instances, the stores, the codec. */
const PAIRS: Array<{ name: string; factory: string; args: unknown[]; warmOps?: number }> = [
  { name: "live path, R = 3", factory: "generator", args: [3, 1000] },
  { name: "live path, R = 30", factory: "generator", args: [30, 1000] },
  { name: "stateless, R = 10", factory: "generator", args: [10, 0] },
  { name: "stateless, R = 30", factory: "generator", args: [30, 0] },
  { name: "3 instances, defaults, R = 10", factory: "generatorThreeInstances", args: [10, 1000] },
  { name: "memory store, R = 3", factory: "generatorOnStore", args: [3, "memory"] },
  { name: "Redis store, R = 3", factory: "generatorOnStore", args: [3, "redis"], warmOps: STORE_WARM },
  { name: "memory store, a step a round, R = 3", factory: "generatorStepsOnStore", args: [3, "memory"] },
  { name: "Redis store, a step a round, R = 3", factory: "generatorStepsOnStore", args: [3, "redis"], warmOps: STORE_WARM },
  { name: "codec sealed, 10 records", factory: "ours", args: [10, "sealed"] },
  { name: "realistic stateless, R = 10, 300 in flight", factory: "realistic", args: [10, 0, 300] },
  { name: "realistic stateless, R = 30, 300 in flight", factory: "realistic", args: [30, 0, 300] },
  { name: "realistic live, R = 10, 300 in flight", factory: "realistic", args: [10, null, 300] },
];

// `BENCH_PAIRS=stateless,codec` measures only the pairs whose names contain one of those words.
const only = (process.env.BENCH_PAIRS ?? "").split(",").filter(Boolean);
const chosen = only.length === 0 ? PAIRS : PAIRS.filter((p) => only.some((word) => p.name.includes(word)));
const started = Date.now();
const log = (line: string) => process.stdout.write(`${line}\n`);
log(`this build (${head(here)}) / the other (${head(root)} at ${root}): CPU per operation, paired, ${runs} fresh runs each${PINNED_CPU !== undefined ? `, pinned to CPU ${PINNED_CPU}` : ""}`);
const rows: Array<{ name: string; ratio: number; min: number; max: number }> = [];
for (const pair of chosen) {
  const variants: VariantSpec[] = [
    { name: "this", factory: pair.factory, args: pair.args, ...(pair.warmOps !== undefined ? { warmOps: pair.warmOps } : {}) },
    { name: "other", factory: pair.factory, args: pair.args, procFile: otherProc, ...(pair.warmOps !== undefined ? { warmOps: pair.warmOps } : {}) },
  ];
  const { r } = await repeated(runs, variants, (s) => ({ r: ratio(s, "this", "other") }));
  const spread = spreads.at(-1)!;
  rows.push({ name: pair.name, ratio: r, min: spread.min, max: spread.max });
  log(`  ${pair.name.padEnd(34)} ${r.toFixed(3)}  (${spread.min.toFixed(3)}–${spread.max.toFixed(3)})`);
}
const load = os.loadavg()[0]!.toFixed(2);
log(`done in ${Math.round((Date.now() - started) / 1000)} s, load average ${load}${unstable.length > 0 ? `; unstable: ${unstable.join("; ")}` : ""}`);
mkdirSync(`${here}/results`, { recursive: true });
writeFileSync(`${here}/results/trees.json`, `${JSON.stringify({ this: head(here), other: head(root), runs, load: Number(load), rows, unstable }, null, 2)}\n`);
