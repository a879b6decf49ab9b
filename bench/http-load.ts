import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createFetchSender, callWithInput } from "mcp-yield/client";

export interface HttpResult {
  rounds: number;
  concurrency: number;
  generatorCallsPerSec: number;
  handWrittenCallsPerSec: number;
  ratio: number;
  periods: number;
}

/** Completed 3-round calls per second, generator vs hand-written, alternating periods. */
export async function httpSection(options: { periodMs?: number; periods?: number; concurrency?: number } = {}): Promise<HttpResult> {
  const periodMs = options.periodMs ?? 1500;
  const periods = options.periods ?? 10;
  const concurrency = options.concurrency ?? 8;
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
      await Promise.all(Array.from({ length: concurrency }, async () => {
        while (performance.now() < until) {
          await call();
          done++;
        }
      }));
      return done / (ms / 1000);
    };
    await run(variants.gen, 500); // warm up both
    await run(variants.hand, 500);
    const rates = { gen: [] as number[], hand: [] as number[] };
    for (let p = 0; p < periods; p++) {
      const order = p % 2 === 0 ? (["gen", "hand"] as const) : (["hand", "gen"] as const);
      for (const v of order) rates[v].push(await run(variants[v], periodMs));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
    const g = median(rates.gen);
    const h = median(rates.hand);
    return { rounds: 3, concurrency, generatorCallsPerSec: g, handWrittenCallsPerSec: h, ratio: g / h, periods };
  } finally {
    child.kill("SIGTERM");
  }
}
