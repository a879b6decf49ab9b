import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createRuntime, prompt, tool } from "mcp-yield";
import { register } from "mcp-yield/server";
import { testKey } from "../support/keys.js";
import { rpcRequest } from "../support/rpc-request.js";

// register() converts each definition's schemas for the SDK once, not on every request's fresh
// McpServer: what a client lists, and the Mcp-Param header check, must be what the SDK itself
// derives from the same zod schemas.

const input = z.object({
  region: z.string().describe("where").meta({ "x-mcp-header": "Region" }),
  count: z.number().int().min(1).default(3),
  kind: z.enum(["a", "b"]).optional(),
  when: z.iso.datetime().refine((s) => s.endsWith("Z"), "UTC"),
});
const output = z.object({ booked: z.boolean(), at: z.string() });

const ours = tool({
  name: "book",
  description: "books",
  input,
  output,
  *run() {
    return { booked: true, at: "now" };
  },
});
const greet = prompt({
  name: "greet",
  description: "greets",
  arguments: [{ name: "who", description: "whom", required: true }, { name: "tone" }],
  *run({ who }) {
    return { messages: [{ role: "user", content: { type: "text", text: `hi ${who}` } }] };
  },
});

const runtime = createRuntime({ state: { keys: [testKey("l", 1)] } });
const served = createMcpHandler(() => {
  const server = new McpServer({ name: "ours", version: "1" });
  register(server, [ours, greet], { runtime });
  return server;
});
// The SDK given the very same schemas natively: what it lists is the reference.
const native = createMcpHandler(() => {
  const server = new McpServer({ name: "native", version: "1" });
  server.registerTool("book", { description: "books", inputSchema: input, outputSchema: output }, async () => ({ content: [] }));
  server.registerPrompt("greet", { description: "greets", argsSchema: z.object({ who: z.string().describe("whom"), tone: z.string().optional() }) }, async () => ({ messages: [] }));
  return server;
});

let nextId = 1;
async function rpc(handler: typeof served, method: string, params: Record<string, unknown>, headers: Record<string, string> = {}) {
  const request = rpcRequest(nextId++, method, params);
  for (const [name, value] of Object.entries(headers)) request.headers.set(name, value);
  const response = await handler.fetch(request);
  return { status: response.status, body: (await response.json()) as { result?: Record<string, unknown>; error?: { code: number; message: string } } };
}

describe("the schemas register() gives the SDK", () => {
  it("are listed exactly as the SDK lists the same zod schemas, request after request", async () => {
    const reference = await rpc(native, "tools/list", {});
    const referencePrompts = await rpc(native, "prompts/list", {});
    for (let i = 0; i < 3; i++) {
      const listed = await rpc(served, "tools/list", {});
      expect(listed.body.result!.tools).toEqual(reference.body.result!.tools);
      expect((await rpc(served, "prompts/list", {})).body.result!.prompts).toEqual(referencePrompts.body.result!.prompts);
    }
    const [book] = reference.body.result!.tools as Array<{ inputSchema: { properties: Record<string, Record<string, unknown>> } }>;
    expect(book!.inputSchema.properties.region).toMatchObject({ type: "string", description: "where", "x-mcp-header": "Region" });
  });

  it("still carry the Mcp-Param header declaration the SDK checks before dispatch", async () => {
    const args = { region: "eu", count: 2, when: "2026-12-07T00:00:00Z" };
    for (let i = 0; i < 2; i++) {
      const mismatch = await rpc(served, "tools/call", { name: "book", arguments: args }, { "mcp-param-region": "us" });
      expect(mismatch.status).toBe(400);
      expect(mismatch.body.error?.code).toBe(-32020);
      const missing = await rpc(served, "tools/call", { name: "book", arguments: args });
      expect(missing.status).toBe(400);
      const agreeing = await rpc(served, "tools/call", { name: "book", arguments: args }, { "mcp-param-region": "eu" });
      expect(agreeing.body.result?.structuredContent).toEqual({ booked: true, at: "now" });
    }
  });

  it("validate as the runtime does: a bad argument is the runtime's -32602, not the SDK's", async () => {
    const bad = await rpc(served, "tools/call", { name: "book", arguments: { region: "eu", count: 0, when: "2026-12-07T00:00:00+01:00" } }, { "mcp-param-region": "eu" });
    expect(bad.body.error?.code).toBe(-32602);
  });
});
