import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createRuntime, elicit, progress, tool } from "mcp-yield";
import { register } from "mcp-yield/server";
import { testKey } from "../support/keys.js";

// progress(...) in a foreground call reaches a client that asked for progress (a progressToken)
// as notifications/progress, once — a replayed round does not send it again.

const keys = [testKey("p", 41)];

describe("progress in a foreground call", () => {
  it("becomes notifications/progress for the official client's onprogress, not repeated by later rounds", async () => {
    const work = tool({
      name: "work",
      description: "",
      input: z.object({}),
      async *run() {
        yield* progress("Reading", { done: 1, total: 3 });
        const ok = yield* elicit("Go on?", z.object({ ok: z.boolean() }), { key: "go" });
        yield* progress("Writing", { done: 2, total: 3 });
        return ok.action;
      },
    });
    const runtime = createRuntime({ state: { keys }, liveCalls: 0, onError: () => {} });
    const handler = createMcpHandler(() => {
      const server = new McpServer({ name: "progress", version: "1.0.0" });
      register(server, [work], { runtime });
      return server;
    });
    const client = new Client({ name: "c", version: "1.0.0" }, { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: "2026-07-28" } }, inputRequired: { autoFulfill: true } });
    client.setRequestHandler("elicitation/create", async () => ({ action: "accept", content: { ok: true } }) as never);
    await client.connect(new StreamableHTTPClientTransport(new URL("http://in-process/mcp"), { fetch: (url, init) => handler.fetch(new Request(url, init)) }));
    const seen: Array<{ progress: number; total?: number | undefined; message?: string | undefined }> = [];
    const result = await client.callTool({ name: "work", arguments: {} }, { onprogress: (p) => seen.push(p) });
    expect(result.content).toEqual([{ type: "text", text: "accept" }]);
    // The second round replays the first progress (recorded): only the new one is sent. (The
    // SDK client reports its own "Fulfilling input required…" progress between rounds.)
    expect(seen.filter((p) => !String(p.message).startsWith("Fulfilling input required"))).toEqual([
      { progress: 1, total: 3, message: "Reading" },
      { progress: 2, total: 3, message: "Writing" },
    ]);
    await client.close();
    await handler.close();
  });
});
