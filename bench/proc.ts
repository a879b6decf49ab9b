// One benchmark variant in its own process (see harness.ts): builds its operation from
// bench/variants.ts, then answers the coordinator's "warm" and "batch" messages with the CPU
// time (user + system, every thread of this process) each operation cost.
import * as variants from "./variants.js";

type Op = () => unknown;
type Message = { type: "warm"; batchMs: number } | { type: "batch"; ops: number } | { type: "exit" };

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
 * Windows of about 50 ms of CPU; warm once a window is not more than 3 % cheaper than the one
 * before, after at least 1 s of CPU; at most 20 s of CPU (then it is as warm as it will get).
 */
async function warm(batchMs: number): Promise<number> {
  const started = cpuNow();
  let n = 4;
  while ((await timed(n)).cpu * n < 5e6 && n < 1 << 20) n *= 2;
  const windowOps = Math.max(1, Math.round((n * 50e6) / ((await timed(n)).cpu * n)));
  let previous = Infinity;
  for (;;) {
    const perOp = (await timed(windowOps)).cpu;
    const spent = cpuNow() - started;
    if ((spent >= 1e9 && perOp >= previous * 0.97) || spent >= 20e9) return Math.max(1, Math.round((batchMs * 1e6) / perOp));
    previous = perOp;
  }
}

process.on("message", async (message: Message) => {
  if (message.type === "exit") process.exit(0);
  process.send!(message.type === "batch" ? await timed(message.ops) : await warm(message.batchMs));
});
process.send!("ready");
