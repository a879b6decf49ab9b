import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createFetchSender, callWithInput } from "mcp-yield/client";
import { median } from "./median.js";

export interface HttpResult {
  rounds: number;
  concurrency: number;
  generatorCallsPerSec: number;
  handWrittenCallsPerSec: number;
  /** Generator / hand-written calls per second: the median over fresh servers. */
  ratio: number;
  /** The lowest and highest fresh server's ratio. */
  range: [number, number];
  runs: number;
  periods: number;
}

/** One fresh server's figures: medians over its periods, the ratio paired period by period. */
interface HttpRun {
  generatorCallsPerSec: number;
  handWrittenCallsPerSec: number;
  ratio: number;
}

/**
 * Completed 3-round calls per second, generator vs hand-written, on `runs` fresh server
 * processes (5 by default, as every other row): one server measured once read 0.97 in a run
 * where the runs before it read 1.18–1.22, and nothing in the run said how far one server's
 * figure can stray. In each server the two alternate, period by period; the ratio is taken
 * per pair of adjacent periods (paired, as the CPU ratios are) and its median is the server's.
 */
export async function httpSection(options: { runs?: number; periodMs?: number; periods?: number; concurrency?: number } = {}): Promise<HttpResult> {
  const runs = options.runs ?? Number(process.env.BENCH_RUNS ?? 5);
  const periodMs = options.periodMs ?? 1000;
  const periods = options.periods ?? 8;
  const concurrency = options.concurrency ?? 8;
  const each: HttpRun[] = [];
  for (let r = 0; r < runs; r++) each.push(await oneServer(periodMs, periods, concurrency));
  const ratios = each.map((x) => x.ratio);
  return {
    rounds: 3,
    concurrency,
    generatorCallsPerSec: median(each.map((x) => x.generatorCallsPerSec)),
    handWrittenCallsPerSec: median(each.map((x) => x.handWrittenCallsPerSec)),
    ratio: median(ratios),
    range: [Math.min(...ratios), Math.max(...ratios)],
    runs,
    periods,
  };
}

async function oneServer(periodMs: number, periods: number, concurrency: number): Promise<HttpRun> {
  const child = spawn(process.execPath, [fileURLToPath(new URL("./http-server.js", import.meta.url))], { stdio: ["ignore", "pipe", "inherit"] });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.stdout.once("data", (d: Buffer) => resolve(Number(String(d).trim())));
      child.once("exit", (code) => reject(new Error(`bench server exited (${code})`)));
    });
    const handlers = { elicit: () => ({ action: "accept" as const, content: { n: 1 } }) };
    const callOnce = (path: string) => {
      const send = createFetchSender(`http://127.0.0.1:${port}${path}`, { capabilities: { elicitation: {} } });
      return async () => {
        const r = await callWithInput<{ content: Array<{ text?: string }> }>(send, "tools/call", { name: "count", arguments: { rounds: 3 } }, handlers);
        if (r.content[0]?.text !== "sum 3") throw new Error(`wrong result from ${path}: ${JSON.stringify(r)}`);
      };
    };
    const variants = { gen: callOnce("/gen"), hand: callOnce("/hand") };
    const run = async (call: () => Promise<void>, ms: number) => {
      let done = 0;
      const until = performance.now() + ms;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (performance.now() < until) {
            await call();
            done++;
          }
        }),
      );
      return done / (ms / 1000);
    };
    // Warm both: a fresh server's first second of calls still compiles.
    for (let w = 0; w < 2; w++) {
      await run(variants.gen, 500);
      await run(variants.hand, 500);
    }
    const rates = { gen: [] as number[], hand: [] as number[] };
    for (let p = 0; p < periods; p++) {
      const order = p % 2 === 0 ? (["gen", "hand"] as const) : (["hand", "gen"] as const);
      for (const v of order) rates[v].push(await run(variants[v], periodMs));
    }
    return { generatorCallsPerSec: median(rates.gen), handWrittenCallsPerSec: median(rates.hand), ratio: median(rates.gen.map((g, p) => g / rates.hand[p]!)) };
  } finally {
    child.kill("SIGTERM");
  }
}
