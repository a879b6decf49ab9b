import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { McpServer } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { createRuntime } from "mcp-yield";
import { register } from "mcp-yield/server";
import { bookFlight } from "../examples/tools/book-flight.js";
import { planTrip } from "../examples/tools/plan-trip.js";
import { workspaceSummary } from "../examples/tools/workspace-summary.js";

// A 2025-era client (initialize handshake, no per-request envelope) on a sessionful
// connection: the SDK's legacy shim fulfils our input_required results with real
// server-to-client requests and re-enters the handler, so the same tools keep working.

async function connectLegacy() {
  const runtime = createRuntime({ state: { keys: [{ id: "legacy", secret: new Uint8Array(32).fill(8) }] } });
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
  return { client, asked, close: async () => { await client.close(); await server.close(); } };
}

const textOf = (r: unknown) => ((r as { content: Array<{ text?: string }> }).content ?? []).map((c) => c.text).join(" ");

describe("2025-era clients through the SDK's legacy shim", () => {
  it("book_flight, plan_trip and workspace_summary complete", async () => {
    const { client, asked, close } = await connectLegacy();
    try {
      expect(textOf(await client.callTool({ name: "book_flight", arguments: { destination: "Paris" } }))).toMatch(/Booked Paris/);
      expect(textOf(await client.callTool({ name: "plan_trip", arguments: {} }))).toBe("Trip planned: Grace is going to Lisbon.");
      expect(textOf(await client.callTool({ name: "workspace_summary", arguments: {} }))).toBe("Workspace file:///legacy: legacy-sample");
      expect(asked).toHaveLength(4);
    } finally {
      await close();
    }
  });
});
