import { describe, expect, it } from "vitest";
import { callWithInput, ClientError, createFetchSender } from "mcp-yield/client";

// The fetch sender against canned HTTP responses: what a client gets from odd servers.
const fakeFetch = (reply: (body: { id: number; params: Record<string, unknown> }, headers: Headers) => Response) => {
  const seen: Array<{ body: { id: number; params: Record<string, unknown> }; headers: Headers }> = [];
  const f = (async (_url: string | URL | Request, init?: RequestInit) => {
    const body = JSON.parse(String(init?.body));
    const headers = new Headers(init?.headers);
    seen.push({ body, headers });
    return reply(body, headers);
  }) as typeof fetch;
  return { f, seen };
};
const json = (v: unknown, status = 200) => new Response(JSON.stringify(v), { status, headers: { "content-type": "application/json" } });

describe("fetch sender", () => {
  it("sends the envelope and headers, a new id per request, and reads SSE responses", async () => {
    const { f, seen } = fakeFetch((b) =>
      new Response(`event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: b.id, result: b.params.requestState ? { content: [] } : { resultType: "input_required", requestState: "S1" } })}\n\n`, {
        headers: { "content-type": "text/event-stream" },
      }),
    );
    const send = createFetchSender("http://x/mcp", { capabilities: { sampling: {} }, fetch: f });
    await callWithInput(send, "tools/call", { name: "t", arguments: { a: 1 } }, {});
    expect(seen.map((s) => s.body.id)).toEqual([1, 2]);
    expect(seen[0]!.headers.get("mcp-method")).toBe("tools/call");
    expect(seen[0]!.headers.get("mcp-name")).toBe("t");
    expect(seen[0]!.headers.get("mcp-protocol-version")).toBe("2026-07-28");
    expect(seen[0]!.body.params._meta).toMatchObject({ "io.modelcontextprotocol/clientCapabilities": { sampling: {} } });
    expect(seen[1]!.body.params.requestState).toBe("S1");
    expect("inputResponses" in seen[1]!.body.params).toBe(false); // a state-only round sends no answers
  });

  it("turns an id-less error (HTTP 413) into an rpc_error and junk into a transport error", async () => {
    const tooBig = createFetchSender("http://x/mcp", { capabilities: {}, fetch: fakeFetch(() => json({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "Payload Too Large" } }, 413)).f });
    await expect(tooBig("tools/call", { name: "t" })).rejects.toMatchObject({ reason: "rpc_error", rpc: { code: -32000 } });
    const junk = createFetchSender("http://x/mcp", { capabilities: {}, fetch: fakeFetch(() => new Response("<html>oops</html>", { status: 502 })).f });
    await expect(junk("tools/call", { name: "t" })).rejects.toBeInstanceOf(ClientError);
    await expect(junk("tools/call", { name: "t" })).rejects.toMatchObject({ reason: "transport" });
    const wrongId = createFetchSender("http://x/mcp", { capabilities: {}, fetch: fakeFetch(() => json({ jsonrpc: "2.0", id: 999, result: {} })).f });
    await expect(wrongId("tools/call", { name: "t" })).rejects.toMatchObject({ reason: "transport" });
  });

  it("refuses to answer a kind it has no handler for, and never forwards stale answers", async () => {
    const { f, seen } = fakeFetch((b) => json({ jsonrpc: "2.0", id: b.id, result: { resultType: "input_required", inputRequests: { r: { method: "roots/list" } } } }));
    const send = createFetchSender("http://x/mcp", { capabilities: {}, fetch: f });
    await expect(callWithInput(send, "tools/call", { name: "t", inputResponses: { stale: 1 }, requestState: "old" }, {})).rejects.toMatchObject({ reason: "no_handler" });
    expect(seen[0]!.body.params).not.toHaveProperty("inputResponses");
    expect(seen[0]!.body.params).not.toHaveProperty("requestState");
  });
});
