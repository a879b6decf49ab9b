// Heap per suspended call, in its own process (node --expose-gc): plan_trip suspended at its
// third ask through a per-request SDK McpServer with 100 SDK tools registered. Prints KiB.
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { createRuntime } from "mcp-yield";
import { callWithInput, createFetchSender } from "mcp-yield/client";
import { register } from "mcp-yield/server";
import { planTrip } from "../examples/tools/plan-trip.js";

const gc = (globalThis as { gc?: () => void }).gc!;
const runtime = createRuntime({ state: { keys: [{ id: "m", secret: new Uint8Array(32).fill(4) }] }, onError: () => {} });
const handler = createMcpHandler(() => {
  const server = new McpServer({ name: "heap", version: "1.0.0" });
  for (let i = 0; i < 100; i++) server.registerTool(`sdk_tool_${i}`, { description: `SDK tool ${i}`, inputSchema: z.object({ a: z.string() }) }, async () => ({ content: [] }));
  register(server, [planTrip], { runtime });
  return server;
});
const send = createFetchSender("http://in-process/mcp", { capabilities: { elicitation: {} }, fetch: (url, init) => handler.fetch(new Request(url, init)) });
const answers: Record<string, Record<string, string>> = { name: { name: "Ada" }, destination: { destination: "Kyoto" } };
async function toThirdAsk(calls: number) {
  for (let done = 0; done < calls; done += 20) {
    await Promise.all(
      Array.from({ length: Math.min(20, calls - done) }, () =>
        callWithInput(
          send,
          "tools/call",
          { name: "plan_trip", arguments: {} },
          {
            elicit: (_p, { key }) => {
              if (!(key in answers)) throw new Error("stop");
              return { action: "accept", content: answers[key] };
            },
          },
        ).catch(() => {}),
      ),
    );
  }
}
const settle = async () => {
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  return process.memoryUsage().heapUsed;
};
await toThirdAsk(40);
const before = await settle();
const calls = 400;
await toThirdAsk(calls);
const after = await settle();
process.stdout.write(`${((after - before) / calls / 1024).toFixed(2)}\n`);
