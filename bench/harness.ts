import { type ChildProcess, fork, spawnSync } from "node:child_process";
import os from "node:os";
import { fileURLToPath } from "node:url";

/**
 * The benchmark harness for noisy shared machines. Each variant runs in its own process (its
 * own JIT and heap, nothing shared) and is measured in CPU time — this process's user + system
 * time, which other processes on the machine do not inflate the way they inflate wall time.
 * Variants alternate in short batches, one round of batches after another, in rotating order;
 * a ratio is taken within each round (paired: the two batches ran moments apart) and the
 * median of those ratios is the run's figure. `runs` fresh sets of processes give the median
 * of run medians. Every process of a set runs on one CPU (`PINNED_CPU`): left to the scheduler,
 * two processes of the same build read 0.81–1.16 of each other over fresh pairs on this VM,
 * which was most of what earlier notes called the machine's noise. (Wall time in worker
 * threads read the same build anywhere from 0.73 to 1.18 here; how many processes alternate
 * moves the ratios too.)
 */

export interface VariantSpec {
  /** Label in results. */
  name: string;
  /** An export of bench/variants.ts: `(...args) => op`, where `op` is one operation. */
  factory: string;
  args: unknown[];
  /** Operations the process runs before it may count as warm (see proc.ts `warm`); none by default. */
  warmOps?: number;
  /** Another checkout's compiled proc.js, to run the variant on that build (bench/trees.ts); this one's by default. */
  procFile?: string;
}

/** CPU nanoseconds per operation, `samples[round][variant]`, and wall nanoseconds likewise. */
export interface Sampled {
  names: string[];
  samples: number[][];
  wall: number[][];
}

import { median } from "./median.js";

export { median };

/**
 * `npm run bench -- --quick`: the headline ratios in about two minutes, for a contributor before
 * a commit — one fresh run of 9 rounds of batches per set instead of five of 31, the set's
 * processes warmed on both CPUs and pinned to one only to be measured, an unstable set flagged
 * but not measured again. Warm-ups are not shortened: capped at 1.5 s of CPU, the generator was
 * measured cold (live a/b at R = 3 read 5.8). Every output says it was quick; its figures are
 * not the targets' (a full run's are).
 */
export const QUICK = process.argv.includes("--quick");

const procFile = fileURLToPath(new URL("./proc.js", import.meta.url));

/**
 * V8 flags of every variant process; none by default — the figures are for V8 as users run it.
 * `BENCH_V8_FLAGS=--predictable` (compiler and garbage collector on the main thread, in a fixed
 * order) was tried against the noise, and is no cure: a build against itself over fresh pairs of
 * processes read 0.98–1.03 with it and 0.94–1.18 without at R = 10 on a quiet hour, but
 * 0.22–6.6 with it and 0.65–1.65 without at R = 1 on a busy one; and it moves the ratios
 * between variants (stateless a/b at R = 30: 2.07 with it, 1.84 without, same build). Kept as
 * a knob for experiments, never for the targets.
 */
export const V8_FLAGS = (process.env.BENCH_V8_FLAGS ?? "").split(" ").filter(Boolean);

/**
 * The CPU every variant process of a set runs on, when it can be chosen (`taskset`, Linux), so
 * that the processes a ratio compares run on the same core. Unpinned, on this two-core VM, the
 * same build against itself read 0.81–1.16 over eight fresh pairs of processes (a process
 * keeps to the core it lands on, and the cores' speeds differ and move); pinned to one core,
 * 0.97–1.02 over eight, and 0.93–1.01 over six on the other core — and each process costs less
 * (no migrations between cores: 67–82 µs per call against 80–112 for the memory store's call).
 * The last core by default, away from the interrupts and the coordinator; `BENCH_CPU=<n>` picks
 * one, `BENCH_CPU=none` leaves placement to the scheduler.
 */
export const PINNED_CPU: number | undefined = pinnedCpu();

function pinnedCpu(): number | undefined {
  const asked = process.env.BENCH_CPU;
  if (asked === "none") return undefined;
  const cpu = asked === undefined || asked === "" ? os.cpus().length - 1 : Number(asked);
  if (!Number.isInteger(cpu) || cpu < 0) throw new Error(`BENCH_CPU must be a CPU number or "none", got ${JSON.stringify(asked)}`);
  const probe = spawnSync("taskset", ["-c", String(cpu), "true"], { stdio: "ignore" });
  if (probe.status === 0) return cpu;
  if (asked !== undefined) throw new Error(`BENCH_CPU=${asked}: cannot pin a process to CPU ${cpu} with taskset (${probe.error?.message ?? `exit ${probe.status}`})`);
  process.stderr.write("bench: taskset is not available; variant processes are not pinned to one CPU (ratios will be noisier)\n");
  return undefined;
}

/**
 * A variant process: `proc.js factory args`, on the pinned CPU when there is one — in a quick
 * run only from the end of its warm-up (`pinAfterWarm`): the set's processes warm on both CPUs.
 */
function startVariant(v: VariantSpec): ChildProcess {
  const stdio: ["ignore", "inherit", "inherit", "ipc"] = ["ignore", "inherit", "inherit", "ipc"];
  const args = [v.factory, JSON.stringify(v.args)];
  const file = v.procFile ?? procFile;
  // taskset execs node in place: the IPC channel (an inherited descriptor) reaches it unchanged.
  if (PINNED_CPU !== undefined && !QUICK) return fork(file, args, { stdio, execPath: "taskset", execArgv: ["-c", String(PINNED_CPU), process.execPath, ...V8_FLAGS] });
  return fork(file, args, { stdio, execArgv: V8_FLAGS });
}

/** A quick run's variant process, warm, onto the pinned CPU with all its threads before it is measured. */
function pinAfterWarm(child: ChildProcess): void {
  if (!QUICK || PINNED_CPU === undefined || child.pid === undefined) return;
  const pinned = spawnSync("taskset", ["-a", "-p", "-c", String(PINNED_CPU), String(child.pid)], { stdio: "ignore" });
  if (pinned.status !== 0) throw new Error(`bench: could not pin variant process ${child.pid} to CPU ${PINNED_CPU} (${pinned.error?.message ?? `exit ${pinned.status}`})`);
}

function ask<T>(child: ChildProcess, message: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (reply: T) => {
      child.off("exit", onExit);
      resolve(reply);
    };
    const onExit = (code: number | null) => reject(new Error(`benchmark process exited (${code}) before answering`));
    child.once("message", onMessage);
    child.once("exit", onExit);
    child.send(message as never);
  });
}

/** One run: fresh processes, warmed together, then `rounds` rounds of alternating batches. */
export async function sample(variants: VariantSpec[], options: { rounds?: number; batchMs?: number } = {}): Promise<Sampled> {
  const rounds = options.rounds ?? Number(process.env.BENCH_ROUNDS ?? (QUICK ? 9 : 31));
  const batchMs = options.batchMs ?? Number(process.env.BENCH_BATCH_MS ?? 30);
  const children = variants.map(startVariant);
  try {
    await Promise.all(
      children.map(
        (c) =>
          new Promise((resolve, reject) => {
            c.once("message", resolve);
            c.once("exit", (code) => reject(new Error(`benchmark process exited (${code}) while starting`)));
          }),
      ),
    );
    // Warmed all at once (counted in CPU time, so sharing a core does not change when a process is warm).
    const ops = await Promise.all(children.map((c, i) => ask<number>(c, { type: "warm", batchMs, minOps: variants[i]!.warmOps ?? 0 })));
    for (const c of children) pinAfterWarm(c);
    const samples: number[][] = [];
    const wall: number[][] = [];
    for (let r = 0; r < rounds; r++) {
      const row = new Array<number>(variants.length);
      const wallRow = new Array<number>(variants.length);
      for (let k = 0; k < variants.length; k++) {
        const i = (r + k) % variants.length;
        const t = await ask<{ cpu: number; wall: number }>(children[i]!, { type: "batch", ops: ops[i] });
        row[i] = t.cpu;
        wallRow[i] = t.wall;
      }
      samples.push(row);
      wall.push(wallRow);
    }
    return { names: variants.map((v) => v.name), samples, wall };
  } finally {
    for (const c of children) if (c.connected) c.send({ type: "exit" });
  }
}

/** Median CPU ns per operation of `name` over the rounds of one run. */
export function cost(s: Sampled, name: string): number {
  const i = s.names.indexOf(name);
  return median(s.samples.map((row) => row[i]!));
}

/** Median wall nanoseconds per operation of `name` over the rounds of one run. */
export function wallCost(s: Sampled, name: string): number {
  const i = s.names.indexOf(name);
  return median(s.wall.map((row) => row[i]!));
}

/** The paired ratio a/b: per round, then the median over rounds. */
export function ratio(s: Sampled, a: string, b: string): number {
  const i = s.names.indexOf(a);
  const j = s.names.indexOf(b);
  return median(s.samples.map((row) => row[i]! / row[j]!));
}

/** A figure's median over fresh runs, with the lowest and highest run beside it. */
export interface Spread {
  /** Which variants (a section's set of processes) the figure came from. */
  set: string;
  figure: string;
  median: number;
  min: number;
  max: number;
}

/** Every figure `repeated` produced in this process, for the min–max table. */
export const spreads: Spread[] = [];
/** Sets whose variants' cost levels moved more than `UNSTABLE_LEVEL`× between fresh runs even after one re-run. */
export const unstable: string[] = [];
/** How far a variant's CPU cost per operation may move between fresh sets of processes before the set is re-run. */
export const UNSTABLE_LEVEL = 1.5;

/**
 * `runs` fresh runs; `summarize` turns each into figures; per figure, the median across runs
 * (kept in `spreads` with its min and max). When a variant's own cost level moved more than
 * 1.5× between fresh runs — the machine changed under the measurement, so its ratios do not
 * describe one machine — the set is measured again once (never in a quick run); if it moves
 * again it is reported in `unstable` rather than trusted silently.
 */
export async function repeated<T extends Record<string, number>>(runs: number, variants: VariantSpec[], summarize: (s: Sampled) => T, options?: { rounds?: number; batchMs?: number }): Promise<T> {
  const set = variants.map((v) => `${v.name}(${v.args.join(",")})`).join(" ");
  for (let attempt = 0; ; attempt++) {
    const results: T[] = [];
    const levels = new Map<string, number[]>(variants.map((v) => [v.name, []]));
    for (let r = 0; r < runs; r++) {
      const sampled = await sample(variants, options);
      results.push(summarize(sampled));
      for (const v of variants) levels.get(v.name)!.push(cost(sampled, v.name));
    }
    const moved = [...levels].filter(([, xs]) => Math.max(...xs) / Math.min(...xs) > UNSTABLE_LEVEL);
    if (moved.length > 0 && attempt === 0 && !QUICK) {
      process.stderr.write(`  unstable (${moved.map(([n, xs]) => `${n} ${(Math.max(...xs) / Math.min(...xs)).toFixed(2)}×`).join(", ")}): measuring ${set} again\n`);
      continue;
    }
    if (moved.length > 0) unstable.push(`${set}: ${moved.map(([n, xs]) => `${n}'s cost moved ${(Math.max(...xs) / Math.min(...xs)).toFixed(2)}× between fresh runs`).join(", ")}`);
    const figures = Object.keys(results[0]!);
    for (const figure of figures) {
      const xs = results.map((x) => x[figure]!);
      spreads.push({ set, figure, median: median(xs), min: Math.min(...xs), max: Math.max(...xs) });
    }
    return Object.fromEntries(figures.map((k) => [k, median(results.map((x) => x[k]!))])) as T;
  }
}
