import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createRuntime, prompt } from "mcp-yield";
import { register } from "mcp-yield/server";
import { bookFlight } from "../../examples/tools/book-flight.js";
import { testKey } from "../support/keys.js";
import { rpcRequest } from "../support/rpc-request.js";

// register() on an McpServer that also has tools of its own, served through the SDK's handler.

const runtime = createRuntime({ state: { keys: [testKey("s", 1)] } });
const app = createMcpHandler(() => {
  const server = new McpServer({ name: "mixed", version: "1" });
  server.registerTool("plain_before", { inputSchema: z.object({ x: z.number() }) }, async ({ x }) => ({ content: [{ type: "text", text: `before ${x}` }] }));
  register(server, [bookFlight], { runtime, principal: (ctx) => ctx.http?.authInfo?.extra?.sub as string | undefined });
  server.registerTool("plain_after", { inputSchema: z.object({}) }, async () => ({ content: [{ type: "text", text: "after" }] }));
  return server;
});

let nextId = 1;
async function rpc(method: string, params: Record<string, unknown>, sub?: string) {
  const id = nextId++;
  const response = await app.fetch(rpcRequest(id, method, params), sub ? { authInfo: { token: "t", clientId: "app", scopes: [], extra: { sub } } } : {});
  const body = (await response.json()) as { id: number; result?: Record<string, unknown>; error?: { code: number; data?: { reason?: string } } };
  expect(body.id).toBe(id);
  return body;
}

describe("register on an McpServer with tools of its own", () => {
  it("lists both kinds, with our tool's input schema", async () => {
    const list = await rpc("tools/list", {});
    const tools = list.result!.tools as Array<{ name: string; inputSchema: { properties?: Record<string, unknown> } }>;
    expect(tools.map((t) => t.name).sort()).toEqual(["book_flight", "plain_after", "plain_before"]);
    expect(Object.keys(tools.find((t) => t.name === "book_flight")!.inputSchema.properties ?? {})).toEqual(["destination"]);
  });

  it("calls the SDK's own tools registered before and after", async () => {
    expect((await rpc("tools/call", { name: "plain_before", arguments: { x: 2 } })).result!.content).toEqual([{ type: "text", text: "before 2" }]);
    expect((await rpc("tools/call", { name: "plain_after", arguments: {} })).result!.content).toEqual([{ type: "text", text: "after" }]);
    expect((await rpc("tools/call", { name: "nope", arguments: {} })).error?.code).toBe(-32602);
  });

  it("binds states to the principal the option names", async () => {
    const first = await rpc("tools/call", { name: "book_flight", arguments: { destination: "Rome" } }, "alice");
    const state = first.result!.requestState as string;
    const answers = { confirm: { action: "accept", content: { confirm: true } } };
    const stolen = await rpc("tools/call", { name: "book_flight", arguments: { destination: "Rome" }, requestState: state, inputResponses: answers }, "bob");
    expect(stolen.error?.code).toBe(-32602);
    expect(stolen.error?.data?.reason).toBe("wrong_binding");
    const own = await rpc("tools/call", { name: "book_flight", arguments: { destination: "Rome" }, requestState: state, inputResponses: answers }, "alice");
    expect(String((own.result!.content as Array<{ text: string }>)[0]!.text)).toMatch(/^Booked Rome/);
  });
});

describe("register when the SDK hides its own handlers", () => {
  /** An McpServer as a future SDK might be: its handler table moved to a class of its own. */
  function hidden(server: McpServer): McpServer {
    const table = new Map<string, unknown>();
    const moved = { has: (k: string) => table.has(k), get: (k: string) => table.get(k), set: (k: string, v: unknown) => table.set(k, v), delete: (k: string) => table.delete(k) };
    Object.defineProperty(server.server, "_getRequestHandler", { value: undefined });
    Object.defineProperty(server.server, "_requestHandlers", { value: moved });
    return server;
  }

  it("refuses at registration, naming the SDK-native definitions that would break", () => {
    const server = hidden(new McpServer({ name: "x", version: "1" }));
    server.registerTool("plain", { inputSchema: z.object({}) }, async () => ({ content: [] }));
    expect(() => register(server, [bookFlight], { runtime })).toThrow(/no way to reach its own tools\/call handler, so the SDK-native plain would stop working/);
  });

  it("registers when every tool is ours", () => {
    const server = hidden(new McpServer({ name: "x", version: "1" }));
    expect(() => register(server, [bookFlight], { runtime })).not.toThrow();
  });
});

describe("prompts/list", () => {
  it("lists each argument's description and whether it is required", async () => {
    const topic = prompt({
      name: "topic",
      description: "Write about a topic",
      arguments: [
        { name: "subject", description: "What to write about", required: true },
        { name: "tone", description: "How it should sound" },
      ],
      *run({ subject }) {
        return `Write about ${subject}`;
      },
    });
    const handler = createMcpHandler(() => {
      const server = new McpServer({ name: "p", version: "1" });
      register(server, [topic], { runtime });
      return server;
    });
    const response = await handler.fetch(
      new Request("http://x/mcp", {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28", "mcp-method": "prompts/list" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "prompts/list",
          params: {
            _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" }, "io.modelcontextprotocol/clientCapabilities": {} },
          },
        }),
      }),
    );
    const body = (await response.json()) as { result: { prompts: Array<{ name: string; arguments: Array<{ name: string; description?: string; required?: boolean }> }> } };
    expect(body.result.prompts[0]!.arguments).toEqual([
      { name: "subject", description: "What to write about", required: true },
      { name: "tone", description: "How it should sound", required: false },
    ]);
  });
});
