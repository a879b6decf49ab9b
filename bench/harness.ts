/**
 * An alternating benchmark harness. Machines here are noisy, so variants are never measured
 * one after another in long blocks: each batch runs every variant once, in rotating order, and
 * each variant's cost is the median over batches. Ratios are taken between medians of the same
 * run. (tinybench and mitata measure one task to completion before the next, which lets a
 * burst of background load land on one variant only.)
 */

export interface Variant {
  name: string;
  /** One operation; may be async. */
  run: () => unknown;
}

export interface Measured {
  name: string;
  /** Median nanoseconds per operation. */
  nsPerOp: number;
  /** Spread: (p75 - p25) / median of the batch means. */
  spread: number;
  batches: number;
}

const nowNs = () => process.hrtime.bigint();
const isThenable = (v: unknown): v is PromiseLike<unknown> => typeof v === "object" && v !== null && typeof (v as { then?: unknown }).then === "function";

async function timeBatch(v: Variant, ops: number): Promise<number> {
  const start = nowNs();
  for (let i = 0; i < ops; i++) {
    const r = v.run();
    if (isThenable(r)) await r;
  }
  return Number(nowNs() - start) / ops;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;

/** Measure variants alternately: `batches` rounds, each running every variant for ≈ `batchMs`. */
export async function compare(variants: Variant[], options: { batches?: number; batchMs?: number } = {}): Promise<Measured[]> {
  const batches = options.batches ?? 15;
  const batchMs = options.batchMs ?? 20;
  // Warm up and calibrate ops per batch for each variant.
  const ops = new Map<string, number>();
  for (const v of variants) {
    await timeBatch(v, 20);
    let n = 1;
    for (;;) {
      const start = nowNs();
      await timeBatch(v, n);
      const ms = Number(nowNs() - start) / 1e6;
      if (ms >= batchMs / 4 || n >= 1 << 20) {
        ops.set(v.name, Math.max(1, Math.round((n * batchMs) / Math.max(ms, 0.001))));
        break;
      }
      n *= 4;
    }
  }
  const samples = new Map<string, number[]>(variants.map((v) => [v.name, []]));
  for (let b = 0; b < batches; b++) {
    for (let k = 0; k < variants.length; k++) {
      const v = variants[(b + k) % variants.length]!;
      samples.get(v.name)!.push(await timeBatch(v, ops.get(v.name)!));
    }
  }
  return variants.map((v) => {
    const xs = samples.get(v.name)!;
    const m = median(xs);
    return { name: v.name, nsPerOp: m, spread: (quantile(xs, 0.75) - quantile(xs, 0.25)) / m, batches: xs.length };
  });
}

/** Format ns as µs with 1–3 significant decimals. */
export const us = (ns: number) => (ns / 1000 >= 100 ? (ns / 1000).toFixed(0) : (ns / 1000).toFixed(ns / 1000 >= 10 ? 1 : 2));
