import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";

/**
 * An alternating, isolated benchmark harness. Machines here are noisy, so variants are never
 * measured one after another in long blocks: each batch runs every variant once, in rotating
 * order, and a variant's cost is the median over its batches; ratios are taken between medians
 * of the same run. Each variant lives in its own worker thread (its own V8 isolate, JIT and
 * heap), so one variant's object shapes and garbage never slow another down — run in one
 * isolate, the generator measured up to 1.4× slower than it does alone. Batches are 200 ms:
 * at 25 ms the spread between batches of one variant was as large as the effect measured.
 * (tinybench and mitata run one task to completion before the next, so a burst of background
 * load lands on one variant only.)
 */

export interface VariantSpec {
  /** Label in results. */
  name: string;
  /** An export of bench/variants.ts: `(...args) => op`, where `op` is one operation. */
  factory: string;
  args: unknown[];
}

export interface Measured {
  name: string;
  /** Median nanoseconds per operation. */
  nsPerOp: number;
  /** Spread: (p75 - p25) / median of the batch means. */
  spread: number;
  batches: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;

const workerFile = fileURLToPath(new URL("./worker.js", import.meta.url));

function ask<T>(worker: Worker, message: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (reply: T) => {
      worker.off("error", onError);
      resolve(reply);
    };
    const onError = (error: Error) => {
      worker.off("message", onMessage);
      reject(error);
    };
    worker.once("message", onMessage);
    worker.once("error", onError);
    worker.postMessage(message);
  });
}

/** Measure variants alternately: `batches` rounds, each running every variant for ≈ `batchMs`. */
export async function compare(variants: VariantSpec[], options: { batches?: number; batchMs?: number } = {}): Promise<Measured[]> {
  const batches = options.batches ?? 9;
  const batchMs = options.batchMs ?? 200;
  const workers = variants.map((v) => new Worker(workerFile, { workerData: { factory: v.factory, args: v.args } }));
  try {
    // One at a time: warm-up and calibration must not overlap either.
    const ops: number[] = [];
    for (const w of workers) ops.push(await ask<number>(w, { type: "calibrate", batchMs }));
    const samples: number[][] = variants.map(() => []);
    for (let b = 0; b < batches; b++) {
      for (let k = 0; k < variants.length; k++) {
        const i = (b + k) % variants.length;
        samples[i]!.push(await ask<number>(workers[i]!, { type: "batch", ops: ops[i] }));
      }
    }
    return variants.map((v, i) => {
      const xs = samples[i]!;
      const m = median(xs);
      return { name: v.name, nsPerOp: m, spread: (quantile(xs, 0.75) - quantile(xs, 0.25)) / m, batches: xs.length };
    });
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}
