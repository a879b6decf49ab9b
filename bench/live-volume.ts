// The live path at volume, in its own process (node --expose-gc): `calls` calls in flight on one
// instance with the default bounds, served in turn (each call's next round comes back after every
// other call's), a call that ends replaced by a new one. Prints JSON: the share of later rounds
// that resumed over the second half, and the heap grown meanwhile (MiB): the held generators —
// which the default `liveCallBytes` (16 MiB) bounds — with the calls' states the queue holds here.
import { createRuntime, type RoundPath } from "mcp-yield";
import { countGenerator } from "./counting-tools.js";

const calls = Number(process.argv[2] ?? 5000);
const requests = Number(process.argv[3] ?? 12 * calls);
const gc = (globalThis as { gc?: () => void }).gc!;
const paths: Partial<Record<RoundPath, number>> = {};
let counting = false;
const runtime = createRuntime({
  state: { keys: [{ id: "v", secret: new Uint8Array(32).fill(7) }] },
  onRound: (trace) => {
    if (counting) paths[trace.path] = (paths[trace.path] ?? 0) + 1;
  },
});
const info = { clientCapabilities: { elicitation: {} } };
// Calls of 1 to 8 rounds, staggered so that they do not all end together.
let started = 0;
const fresh = () => ({ rounds: 1 + (started++ % 8), state: undefined as string | undefined, key: "" });
gc();
const before = process.memoryUsage().heapUsed;
const queue = Array.from({ length: calls }, fresh);
for (let served = 0; served < requests; served++) {
  if (served === requests / 2) counting = true;
  const call = queue.shift()!;
  const params = { name: "count", arguments: { rounds: call.rounds }, ...(call.state ? { requestState: call.state, inputResponses: { [call.key]: { action: "accept", content: { n: 1 } } } } : {}) };
  const r = (await runtime.callTool(countGenerator, params, info)) as { requestState?: string; inputRequests?: Record<string, unknown> };
  queue.push(r.requestState !== undefined ? { ...call, state: r.requestState, key: Object.keys(r.inputRequests ?? {})[0]! } : fresh());
}
gc();
const heapMiB = (process.memoryUsage().heapUsed - before) / 2 ** 20;
// Used after the measurement, so neither is dead (and collected, held generators and all) before it.
await runtime.close();
if (queue.length !== calls) throw new Error("calls went missing");
const resumed = paths.resumed ?? 0;
const replayed = paths.replayed ?? 0;
process.stdout.write(`${JSON.stringify({ calls, requests, resumed, replayed, share: resumed / (resumed + replayed), heapMiB })}\n`);
