import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Agent, request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callWithInput, ClientError, createFetchSender, type InputHandlers, sdkSender } from "mcp-yield/client";
import { contentFor } from "../../examples/answer-from-schema.js";
import { type RunningServer, startExampleServer } from "../../examples/app.js";
import { testKey } from "../support/keys.js";
import { textOf } from "../support/results.js";

// The example server over real HTTP, driven three ways: the official SDK client with its own
// input-required handling, our loop over that client, and our loop over plain fetch.

let server: RunningServer;
const errors: unknown[] = [];
beforeAll(async () => {
  server = await startExampleServer({ keys: [testKey("http", 4)], onError: (e) => errors.push(e) });
});
afterAll(() => server.close());

const answers: Record<string, Record<string, string | boolean>> = { name: { name: "Ada" }, destination: { destination: "Nairobi" }, confirm: { confirm: true } };
const handlers: InputHandlers = {
  elicit: (params, { key }) => (params.mode === "url" ? { action: "accept" } : { action: "accept", content: contentFor(params.requestedSchema, answers[key]) }),
  sample: () => ({ role: "assistant", content: { type: "text", text: "sampled-summary" }, model: "test" }),
  roots: () => [{ uri: "file:///work/project", name: "project" }],
};
const expected: Array<[string, Record<string, unknown>, RegExp]> = [
  ["book_flight", { destination: "Lisbon" }, /Booked Lisbon .*draft D-[0-9a-f]{8}/],
  ["plan_trip", {}, /Ada is going to Nairobi/],
  ["workspace_summary", {}, /file:\/\/\/work\/project: sampled-summary/],
];

async function sdkClient(autoFulfill: boolean) {
  const client = new Client(
    { name: "test-sdk-client", version: "1.0.0" },
    { capabilities: { elicitation: {}, sampling: {}, roots: {} }, versionNegotiation: { mode: { pin: "2026-07-28" } }, inputRequired: { autoFulfill } },
  );
  client.setRequestHandler(
    "elicitation/create",
    async (request) => (await handlers.elicit!(request.params as never, { key: guessKey(request.params), round: 0, signal: AbortSignal.timeout(10_000) })) as never,
  );
  client.setRequestHandler("sampling/createMessage", async (request) => handlers.sample!(request.params as never, { key: "", round: 0, signal: AbortSignal.timeout(10_000) }) as never);
  client.setRequestHandler("roots/list", async () => ({ roots: [{ uri: "file:///work/project", name: "project" }] }));
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  return client;
}
// The SDK's handlers do not see the inputRequests key; the example questions say what they ask.
const guessKey = (params: unknown) => {
  const m = String((params as { message?: string }).message);
  return m.startsWith("What is your name") ? "name" : m.startsWith("Where") ? "destination" : "confirm";
};

describe("example tools over HTTP", () => {
  it.each(expected)("%s completes through @modelcontextprotocol/client with its own input-required handling", async (name, args, pattern) => {
    const client = await sdkClient(true);
    try {
      const result = await client.callTool({ name, arguments: args });
      expect(result.isError).toBeFalsy();
      expect(textOf(result as never, " ")).toMatch(pattern);
    } finally {
      await client.close();
    }
  });

  it.each(expected)("%s completes through mcp-yield/client over the SDK client", async (name, args, pattern) => {
    const client = await sdkClient(false);
    try {
      const rounds: number[] = [];
      const result = await callWithInput<{ content: Array<{ type: string; text?: string }> }>(sdkSender(client), "tools/call", { name, arguments: args }, handlers, {
        onRound: (r) => rounds.push(r.round),
      });
      expect(textOf(result, " ")).toMatch(pattern);
      expect(rounds.length).toBe(name === "plan_trip" ? 3 : 1);
    } finally {
      await client.close();
    }
  });

  it.each(expected)("%s completes through mcp-yield/client over plain fetch", async (name, args, pattern) => {
    const send = createFetchSender(server.url, { capabilities: { elicitation: {}, sampling: {}, roots: {} } });
    const result = await callWithInput<{ content: Array<{ type: string; text?: string }> }>(send, "tools/call", { name, arguments: args }, handlers);
    expect(textOf(result, " ")).toMatch(pattern);
  });

  it("book_flight declined ends cancelled; the prompt completes too", async () => {
    const send = createFetchSender(server.url, { capabilities: { elicitation: {} } });
    const declined = await callWithInput<{ content: Array<{ type: string; text?: string }>; isError?: boolean }>(
      send,
      "tools/call",
      { name: "book_flight", arguments: { destination: "Oslo" } },
      { elicit: () => ({ action: "decline" }) },
    );
    expect(declined.isError).toBe(true);
    expect(textOf(declined, " ")).toMatch(/cancelled/);
    const p = await callWithInput<{ messages: Array<{ content: { text: string } }> }>(
      send,
      "prompts/get",
      { name: "test_input_required_result_prompt" },
      { elicit: () => ({ action: "accept", content: { context: "ctx" } }) },
    );
    expect(p.messages[0]!.content.text).toBe("Context: ctx");
  });

  it("a tampered state is a JSON-RPC -32602 error that echoes the request id", async () => {
    const send = createFetchSender(server.url, { capabilities: { elicitation: {} } });
    const first = (await send("tools/call", { name: "book_flight", arguments: { destination: "Rome" } })) as { requestState: string };
    const response = await fetch(server.url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "book_flight" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "req-77",
        method: "tools/call",
        params: {
          name: "book_flight",
          arguments: { destination: "Rome" },
          requestState: `${first.requestState}-TAMPERED`,
          inputResponses: { confirm: { action: "accept", content: { confirm: true } } },
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
            "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
          },
        },
      }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { id: unknown; error?: { code: number; data?: { reason?: string } } };
    expect(body.id).toBe("req-77");
    expect(body.error?.code).toBe(-32602);
    expect(body.error?.data?.reason).toBe("bad_signature");
  });

  it("repeating book_flight's final round books the same receipt (idempotency key from the state)", async () => {
    const send = createFetchSender(server.url, { capabilities: { elicitation: {} } });
    const first = (await send("tools/call", { name: "book_flight", arguments: { destination: "Lima" } })) as { requestState: string };
    const final = { name: "book_flight", arguments: { destination: "Lima" }, requestState: first.requestState, inputResponses: { confirm: { action: "accept", content: { confirm: true } } } };
    const a = textOf((await send("tools/call", final)) as never);
    const b = textOf((await send("tools/call", final)) as never);
    expect(a).toMatch(/receipt R-/);
    expect(b).toBe(a);
    const other = (await send("tools/call", { name: "book_flight", arguments: { destination: "Lima" } })) as { requestState: string };
    const c = textOf((await send("tools/call", { ...final, requestState: other.requestState })) as never);
    expect(c.split("receipt ")[1]).not.toBe(a.split("receipt ")[1]);
  });

  it("the client loop refuses an unknown resultType and bounds the rounds", async () => {
    const weird = async () => ({ resultType: "mystery" });
    await expect(callWithInput(weird, "tools/call", { name: "x" }, {})).rejects.toMatchObject({ reason: "unknown_result_type" });
    const forever = async () => ({ resultType: "input_required", requestState: "s" });
    await expect(callWithInput(forever, "tools/call", { name: "x" }, {}, { maxRounds: 3 })).rejects.toBeInstanceOf(ClientError);
    let calls = 0;
    await callWithInput(async () => (++calls < 3 ? { resultType: "input_required", requestState: "s" } : { content: [] }), "tools/call", { name: "x" }, {});
    expect(calls).toBe(3); // state-only rounds are retried at once; a missing resultType means complete
  });

  it("an oversized body sent with Node's fetch gets the HTTP 413 it is, on a connection kept alive for the next request", async () => {
    // A server of its own: the connections counted are this test's.
    const own = await startExampleServer({ keys: [testKey("http", 4)] });
    const sockets: Array<{ destroyed: boolean }> = [];
    own.server.on("request", (req: { socket: { destroyed: boolean } }) => sockets.push(req.socket));
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "book_flight" };
    const oversized = (mb: number) => JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "book_flight", arguments: { destination: "x".repeat(mb * 1024 * 1024) } } });
    const refusal = { jsonrpc: "2.0", error: { code: -32000, message: "Payload Too Large: Request body must not exceed 1048576 bytes" }, id: null };
    try {
      for (const mb of [2, 5, 12]) {
        sockets.length = 0;
        const response = await fetch(own.url, { method: "POST", headers, body: oversized(mb) });
        expect(response.status).toBe(413);
        expect(response.headers.get("connection")).toBe("keep-alive");
        expect(await response.json()).toEqual(refusal);
        const send = createFetchSender(own.url, { capabilities: { elicitation: {} } });
        const next = await callWithInput<{ content: Array<{ type: string; text?: string }> }>(send, "tools/call", { name: "plan_trip", arguments: {} }, handlers);
        expect(textOf(next, " ")).toMatch(/Ada is going to Nairobi/);
        expect(sockets[0]!.destroyed, `${mb} MB: the server closed the connection of the 413`).toBe(false);
      }
      // One keep-alive connection, no more (node:http's agent, which reuses a connection whenever
      // it is free — fetch's pool may open a second one anyway): the 413 and the request after it share it.
      sockets.length = 0;
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const post = (body: string) =>
          new Promise<{ status: number; text: string }>((resolve, reject) => {
            const req = request(own.url, { method: "POST", agent, headers: { ...headers, "content-length": Buffer.byteLength(body) } }, (res) => {
              let text = "";
              res.on("data", (d: Buffer) => (text += d));
              res.on("end", () => resolve({ status: res.statusCode!, text }));
            });
            req.on("error", reject);
            req.end(body);
          });
        expect((await post(oversized(5))).status).toBe(413);
        const after = await post(
          JSON.stringify({
            jsonrpc: "2.0",
            id: 10,
            method: "tools/call",
            params: {
              name: "book_flight",
              arguments: { destination: "Rome" },
              _meta: {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
                "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
              },
            },
          }),
        );
        expect(after.status).toBe(200);
        expect(after.text).toContain("input_required");
        expect(sockets).toHaveLength(2);
        expect(sockets[1]).toBe(sockets[0]);
      } finally {
        agent.destroy();
      }
    } finally {
      await own.close();
    }
  });

  it("reported no author errors while serving", () => {
    expect(errors).toEqual([]);
  });
});
