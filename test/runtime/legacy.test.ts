import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { McpServer } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { createRuntime } from "mcp-yield";
import { register } from "mcp-yield/server";
import { bookFlight } from "../../examples/tools/book-flight.js";
import { planTrip } from "../../examples/tools/plan-trip.js";
import { workspaceSummary } from "../../examples/tools/workspace-summary.js";
import { testKey } from "../support/keys.js";
import { textOf } from "../support/results.js";

// A 2025-era client (initialize handshake, no per-request envelope) on a sessionful
// connection: the SDK's legacy shim fulfils our input_required results with real
// server-to-client requests and re-enters the handler, so the same tools keep working.

async function connectLegacy() {
  const runtime = createRuntime({ state: { keys: [testKey("legacy", 8)] } });
  const server = new McpServer({ name: "legacy-test", version: "1.0.0" });
  register(server, [bookFlight, planTrip, workspaceSummary], { runtime });
  const client = new Client({ name: "legacy-client", version: "1.0.0" }, { capabilities: { elicitation: {}, sampling: {}, roots: {} } });
  const asked: string[] = [];
  client.setRequestHandler("elicitation/create", async (request) => {
    const message = String((request.params as { message: string }).message);
    asked.push(message);
    const content: Record<string, string | boolean> = message.startsWith("What is your name") ? { name: "Grace" } : message.startsWith("Where") ? { destination: "Lisbon" } : { confirm: true };
    return { action: "accept" as const, content };
  });
  client.setRequestHandler("sampling/createMessage", async () => ({ role: "assistant", content: { type: "text", text: "legacy-sample" }, model: "m" }));
  client.setRequestHandler("roots/list", async () => ({ roots: [{ uri: "file:///legacy" }] }));
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  await client.connect(b);
  return {
    client,
    asked,
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}

describe("2025-era clients through the SDK's legacy shim", () => {
  it("book_flight, plan_trip and workspace_summary complete", async () => {
    const { client, asked, close } = await connectLegacy();
    try {
      expect(textOf(await client.callTool({ name: "book_flight", arguments: { destination: "Paris" } }), " ")).toMatch(/Booked Paris/);
      expect(textOf(await client.callTool({ name: "plan_trip", arguments: {} }), " ")).toBe("Trip planned: Grace is going to Lisbon.");
      expect(textOf(await client.callTool({ name: "workspace_summary", arguments: {} }), " ")).toBe("Workspace file:///legacy: legacy-sample");
      expect(asked).toHaveLength(4);
    } finally {
      await close();
    }
  });
});

describe("2025-era clients over stateless HTTP (no session for the shim)", () => {
  it("an eliciting tool answers a JSON-RPC -32021 naming the capability the request did not declare; a tool that asks nothing works", async () => {
    const { Client: HttpClient, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client");
    const { startExampleServer } = await import("../../examples/app.js");
    const server = await startExampleServer({ keys: [testKey("legacy-http", 8)] });
    const bodies: string[] = [];
    const recording: typeof fetch = async (url, init) => {
      const response = await fetch(url, init);
      bodies.push(await response.clone().text());
      return response;
    };
    const client = new HttpClient({ name: "legacy-http", version: "1.0.0" }, { capabilities: { elicitation: {} }, versionNegotiation: { mode: "legacy" } });
    client.setRequestHandler("elicitation/create", async () => ({ action: "accept" as const, content: { confirm: true } }));
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { fetch: recording }));
      await expect(client.callTool({ name: "book_flight", arguments: { destination: "Oslo" } })).rejects.toMatchObject({ code: -32021 });
      // What the wire carried: a JSON-RPC error with the request's id, not an isError result.
      const answer = bodies.map((b) => b.match(/^data: (.*)$/m)?.[1]).filter((d) => d?.includes('"id":1'))[0];
      expect(JSON.parse(answer!)).toMatchObject({ jsonrpc: "2.0", id: 1, error: { code: -32021, data: { requiredCapabilities: { elicitation: {} } } } });
      expect(JSON.parse(answer!).error.message).toMatch(/did not declare: elicitation .*2025-era client/);
      expect(textOf(await client.callTool({ name: "greet", arguments: { name: "Ada" } }), " ")).toBe("Hello, Ada!");
    } finally {
      await client.close();
      await server.close();
    }
  });
});
