// One benchmark variant in its own isolate (see harness.ts): builds the operation from
// bench/variants.ts, then answers "calibrate" and "batch" messages with timings.
import { parentPort, workerData } from "node:worker_threads";
import * as variants from "./variants.js";

type Op = () => unknown;
const { factory, args } = workerData as { factory: keyof typeof variants; args: unknown[] };
const op: Op = await (variants[factory] as (...a: unknown[]) => Op | Promise<Op>)(...args);

const isThenable = (v: unknown): v is PromiseLike<unknown> => typeof v === "object" && v !== null && typeof (v as { then?: unknown }).then === "function";

async function timeBatch(ops: number): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < ops; i++) {
    const r = op();
    if (isThenable(r)) await r;
  }
  return Number(process.hrtime.bigint() - start) / ops;
}

parentPort!.on("message", async (message: { type: "calibrate"; batchMs: number } | { type: "batch"; ops: number }) => {
  if (message.type === "batch") {
    parentPort!.postMessage(await timeBatch(message.ops));
    return;
  }
  await timeBatch(200); // warm up
  let n = 1;
  for (;;) {
    const ns = (await timeBatch(n)) * n;
    if (ns / 1e6 >= message.batchMs / 4 || n >= 1 << 20) {
      parentPort!.postMessage(Math.max(1, Math.round((n * message.batchMs * 1e6) / Math.max(ns, 1000))));
      return;
    }
    n *= 4;
  }
});
