import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createRuntime, type Runtime } from "mcp-yield";
import { callWithInput, createFetchSender } from "mcp-yield/client";
import { register } from "mcp-yield/server";
import { planTrip } from "../examples/tools/plan-trip.js";

// Issue 9.3: a suspended call retains nothing of its requests, and costs a measured amount.

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const keys = [{ id: "m", secret: new Uint8Array(32).fill(4) }];

async function settle(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  return process.memoryUsage().heapUsed;
}

/** An SDK server per request, as `createMcpHandler` serves, with 100 SDK tools beside ours. */
function serve(runtime: Runtime, servers: Array<WeakRef<McpServer>>) {
  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: "memory", version: "1.0.0" });
    for (let i = 0; i < 100; i++) {
      server.registerTool(`sdk_tool_${i}`, { description: `SDK tool ${i}`, inputSchema: z.object({ a: z.string(), b: z.number().optional() }) }, async () => ({ content: [] }));
    }
    register(server, [planTrip], { runtime });
    servers.push(new WeakRef(server));
    return server;
  });
  return createFetchSender("http://in-process/mcp", { capabilities: { elicitation: {} }, fetch: (url, init) => handler.fetch(new Request(url, init)) });
}

/** Drive `calls` plan_trip calls to their third ask (a suspended generator each, on `liveCalls`). */
async function toThirdAsk(send: ReturnType<typeof serve>, calls: number): Promise<void> {
  const answers: Record<string, Record<string, string>> = { name: { name: "Ada" }, destination: { destination: "Kyoto" } };
  for (let done = 0; done < calls; done += 20) {
    await Promise.all(
      Array.from({ length: Math.min(20, calls - done) }, () =>
        callWithInput(send, "tools/call", { name: "plan_trip", arguments: {} }, { elicit: (_p, { key }) => {
          // The third ask is never answered: stop there, leaving the call suspended.
          if (!(key in answers)) throw new Error("stop");
          return { action: "accept", content: answers[key] };
        } }).catch((e: Error) => expect(e.message).toMatch(/stop/)),
      ),
    );
  }
}

describe("suspended calls", () => {
  it("retain no request, no SDK server, and a bounded, measured heap each (100 SDK tools registered)", async () => {
    const servers: Array<WeakRef<McpServer>> = [];
    const live = serve(createRuntime({ state: { keys }, onError: () => {} }), servers);
    await toThirdAsk(live, 40); // warm up: modules, JIT, pools
    const before = await settle();
    const calls = 400;
    await toThirdAsk(live, calls);
    const after = await settle();
    const perCall = (after - before) / calls;
    // Every per-request McpServer (and with it the request's signal and transport) was collected.
    expect(servers.length).toBeGreaterThanOrEqual(3 * (calls + 40));
    expect(servers.filter((s) => s.deref() !== undefined)).toHaveLength(0);
    console.log(`heap per suspended call at its third ask: ${(perCall / 1024).toFixed(1)} KiB`);
    expect(perCall).toBeLessThan(16 * 1024);
    expect(perCall).toBeGreaterThan(0);
  }, 120_000);
});
