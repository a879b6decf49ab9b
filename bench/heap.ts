// Heap per held suspended call, in its own process (node --expose-gc): plan_trip suspended at its
// third ask through a per-request SDK McpServer with 100 SDK tools registered. Prints JSON:
// `{ calls, held, kibPerHeld }`.
//
// Held, not started: the instance keeps only the generators its live-call bounds allow, so the
// heap's growth is divided by the calls whose next round would resume here — counted afterwards
// by answering each call's third ask once and reading the round's path (`onRound`). Dividing by
// the calls started read 0.86 KiB when 37 of 400 were held (≈ 2.2 KiB per held call).
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { createRuntime, type RoundTrace } from "mcp-yield";
import { createFetchSender } from "mcp-yield/client";
import { register } from "mcp-yield/server";
import { planTrip } from "../examples/tools/plan-trip.js";
import { planTripWave } from "./plan-trip-wave.js";

const gc = (globalThis as { gc?: () => void }).gc!;
const paths: Partial<Record<RoundTrace["path"], number>> = {};
let counting = false;
const runtime = createRuntime({
  state: { keys: [{ id: "m", secret: new Uint8Array(32).fill(4) }] },
  onError: () => {},
  onRound: (trace) => {
    if (counting) paths[trace.path] = (paths[trace.path] ?? 0) + 1;
  },
});
const handler = createMcpHandler(() => {
  const server = new McpServer({ name: "heap", version: "1.0.0" });
  for (let i = 0; i < 100; i++) server.registerTool(`sdk_tool_${i}`, { description: `SDK tool ${i}`, inputSchema: z.object({ a: z.string() }) }, async () => ({ content: [] }));
  register(server, [planTrip], { runtime });
  return server;
});
const send = createFetchSender("http://in-process/mcp", { capabilities: { elicitation: {} }, fetch: (url, init) => handler.fetch(new Request(url, init)) });

// Each call's state at its third ask, written to a file rather than kept in this heap (which is
// what is measured).
const dir = mkdtempSync(path.join(os.tmpdir(), "mcp-yield-heap-"));
const suspendedFile = path.join(dir, "suspended");

const settle = async () => {
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  return process.memoryUsage().heapUsed;
};
const calls = 400;
await planTripWave(send, calls);
const before = await settle();
await planTripWave(send, calls, (state) => appendFileSync(suspendedFile, `${state}\n`));
const after = await settle();

const suspended = readFileSync(suspendedFile, "utf8").split("\n").filter(Boolean);
if (suspended.length !== calls) throw new Error(`expected ${calls} calls suspended at their third ask, found ${suspended.length}`);
counting = true;
for (const requestState of suspended) await send("tools/call", { name: "plan_trip", arguments: {}, inputResponses: { confirm: { action: "accept", content: { confirm: true } } }, requestState });
rmSync(dir, { recursive: true, force: true });
const held = paths.resumed ?? 0;
if (held + (paths.replayed ?? 0) !== calls) throw new Error(`expected ${calls} rounds resumed or replayed, saw ${JSON.stringify(paths)}`);
process.stdout.write(`${JSON.stringify({ calls, held, kibPerHeld: held === 0 ? null : (after - before) / held / 1024 })}\n`);
