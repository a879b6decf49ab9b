// One benchmark variant in its own process (see harness.ts): builds its operation from
// bench/variants.ts, then answers the coordinator's "calibrate" and "batch" messages with the
// CPU time (user + system, this process only) each operation took.
import * as variants from "./variants.js";

type Op = () => unknown;
type Message = { type: "calibrate"; batchMs: number } | { type: "batch"; ops: number } | { type: "exit" };

const [factory, args] = [process.argv[2] as keyof typeof variants, JSON.parse(process.argv[3] ?? "[]") as unknown[]];
const op: Op = await (variants[factory] as (...a: unknown[]) => Op | Promise<Op>)(...args);
const isThenable = (v: unknown): v is PromiseLike<unknown> => typeof v === "object" && v !== null && typeof (v as { then?: unknown }).then === "function";

/** CPU and wall nanoseconds per operation over `ops` operations. */
async function timed(ops: number): Promise<{ cpu: number; wall: number }> {
  const start = process.cpuUsage();
  const wall = process.hrtime.bigint();
  for (let i = 0; i < ops; i++) {
    const r = op();
    if (isThenable(r)) await r;
  }
  const used = process.cpuUsage(start);
  return { cpu: ((used.user + used.system) * 1000) / ops, wall: Number(process.hrtime.bigint() - wall) / ops };
}
const batch = async (ops: number) => (await timed(ops)).cpu;

process.on("message", async (message: Message) => {
  if (message.type === "exit") process.exit(0);
  if (message.type === "batch") {
    process.send!(await timed(message.ops));
    return;
  }
  // Warm up (JIT, pools), then find how many operations take about batchMs of CPU.
  const warmUntil = performance.now() + 300;
  while (performance.now() < warmUntil) await batch(16);
  let n = 4;
  for (;;) {
    const ns = (await batch(n)) * n;
    if (ns / 1e6 >= message.batchMs / 4 || n >= 1 << 20) {
      process.send!(Math.max(1, Math.round((n * message.batchMs * 1e6) / Math.max(ns, 1000))));
      return;
    }
    n *= 4;
  }
});
process.send!("ready");
