// One benchmark variant in its own process (see harness.ts): builds its operation from
// bench/variants.ts, then answers the coordinator's "warm" and "batch" messages with the CPU
// time (user + system, every thread of this process) each operation cost.
import { median } from "./median.js";
import * as variants from "./variants.js";

type Op = () => unknown;
type Message = { type: "warm"; batchMs: number; minOps?: number } | { type: "batch"; ops: number } | { type: "exit" };

const [factory, args] = [process.argv[2] as keyof typeof variants, JSON.parse(process.argv[3] ?? "[]") as unknown[]];
const op: Op = await (variants[factory] as (...a: unknown[]) => Op | Promise<Op>)(...args);
const isThenable = (v: unknown): v is PromiseLike<unknown> => typeof v === "object" && v !== null && typeof (v as { then?: unknown }).then === "function";
const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1000;
};

/**
 * Where the last batch's CPU account ended. A batch is charged everything this process spent
 * since then, not only what it spent between its own first and last operation: V8 finishes
 * work after a batch — concurrent marking and sweeping, optimizing compiles on helper threads,
 * idle-time collection while this process waits for its next message — and measured from the
 * batch's own start, that work went uncounted. It grew with the batch (the hand-written state
 * machine at R = 30 read 440 µs per call in batches of 10 and 650 in batches of 500, in one
 * process), so a variant that made more garbage looked cheaper than it was. The gap holds
 * nothing else: the process is idle between batches but for one IPC message.
 */
let accountedUntil = cpuNow();

/** CPU and wall nanoseconds per operation over `ops` operations. */
async function timed(ops: number): Promise<{ cpu: number; wall: number }> {
  const wall = process.hrtime.bigint();
  for (let i = 0; i < ops; i++) {
    const r = op();
    if (isThenable(r)) await r;
  }
  const now = cpuNow();
  const cpu = (now - accountedUntil) / ops;
  accountedUntil = now;
  return { cpu, wall: Number(process.hrtime.bigint() - wall) / ops };
}

/**
 * Warm up until the operation stops getting cheaper, then say how many operations make about
 * `batchMs` of CPU. Counted in CPU, not wall time: a Redis variant spends most of its wall time
 * waiting, and after 300 ms of wall time it still cost 3–6× its steady 220 µs per call (its
 * optimizing compiles were still running — on helper threads, counted in this process's CPU).
 * Windows of about 50 ms of CPU; warm once the last third of the windows so far costs within
 * 3 % of the third before it (their medians) — neither cheaper nor dearer — after at least 1 s of
 * CPU and `minOps` operations (windows' operations); at most 20 s of CPU (then it is as warm as it
 * will get). Thirds, and both ways: a store variant's windows (10–60 calls each) differ by far
 * more than 3 % by chance, and its cost first rises (optimizing compiles on helper threads count
 * here) before it falls. `minOps` because a store variant warms by calls, not by CPU: each call
 * runs its JavaScript a few times between waits, so its functions get hot only after thousands
 * of calls. Stopped after 1 s of CPU (≈ 600 calls), the Redis variant was measured at
 * 1,400–3,500 µs per call, against 490–540 after 6,000 calls in a plain process and 760–1,300
 * after 8,000 in a bench process (the same hour, a busy host), and read 5–8× a bare round trip
 * where it reads ≈ 4× warm; PostgreSQL read 3.2 ms per call against 0.86–0.94 ms after ≈ 3,000.
 * `BENCH_WARM_DEBUG=1` prints each process's warm-up windows.
 */
async function warm(batchMs: number, minOps = 0): Promise<number> {
  const started = cpuNow();
  let done = 0;
  let n = 4;
  while ((await timed(n)).cpu * n < 5e6 && n < 1 << 20) n *= 2;
  const windowOps = Math.max(1, Math.round((n * 50e6) / ((await timed(n)).cpu * n)));
  const windows: number[] = [];
  for (;;) {
    windows.push((await timed(windowOps)).cpu);
    done += windowOps;
    const spent = cpuNow() - started;
    if (spent >= 20e9 || (spent >= 1e9 && done >= minOps && windows.length >= 6 && !stillMoving(windows))) break;
  }
  if (process.env.BENCH_WARM_DEBUG)
    process.stderr.write(`warm: ${((cpuNow() - started) / 1e9).toFixed(1)} s CPU, ${windows.length} windows of ${windowOps}: ${windows.map((w) => Math.round(w / 1e3)).join(" ")}\n`);
  return Math.max(1, Math.round((batchMs * 1e6) / median(lastThird(windows))));
}

const lastThird = (windows: number[]) => windows.slice(windows.length - Math.floor(windows.length / 3));

/** Whether the last third of the windows still costs more than 3 % less, or more, than the third before it (medians). */
function stillMoving(windows: number[]): boolean {
  const third = Math.floor(windows.length / 3);
  const before = median(windows.slice(windows.length - 2 * third, windows.length - third));
  return Math.abs(median(lastThird(windows)) / before - 1) > 0.03;
}

process.on("message", async (message: Message) => {
  if (message.type === "exit") process.exit(0);
  process.send!(message.type === "batch" ? await timed(message.ops) : await warm(message.batchMs, message.minOps));
});
process.send!("ready");
