import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createRuntime, resource, step, tool } from "mcp-yield";
import { callWithInput, ClientError, createFetchSender, encodeHeaderValue, type InputHandlers, type Send } from "mcp-yield/client";
import { register } from "mcp-yield/server";
import { testKey } from "../support/keys.js";
import { textOf } from "../support/results.js";

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
    const { f, seen } = fakeFetch(
      (b) =>
        new Response(
          `event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: b.id, result: b.params.requestState ? { content: [] } : { resultType: "input_required", requestState: "S1" } })}\n\n`,
          {
            headers: { "content-type": "text/event-stream" },
          },
        ),
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

  it('keeps the network error behind "fetch failed": in the message and as the cause', async () => {
    // A real connection to a closed port: undici's "fetch failed" with ECONNREFUSED as its cause.
    const { createServer } = await import("node:net");
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const send = createFetchSender(`http://127.0.0.1:${port}/mcp`, { capabilities: {} });
    const error = await send("tools/call", { name: "t" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ClientError);
    expect(error).toMatchObject({ reason: "transport", message: expect.stringMatching(/^tools\/call failed: fetch failed \(ECONNREFUSED/) });
    expect(((error as ClientError).cause as Error).message).toBe("fetch failed");
  });

  it("refuses to answer a kind it has no handler for, and never forwards stale answers", async () => {
    const { f, seen } = fakeFetch((b) => json({ jsonrpc: "2.0", id: b.id, result: { resultType: "input_required", inputRequests: { r: { method: "roots/list" } } } }));
    const send = createFetchSender("http://x/mcp", { capabilities: { roots: {} }, fetch: f });
    await expect(callWithInput(send, "tools/call", { name: "t", inputResponses: { stale: 1 }, requestState: "old" }, {})).rejects.toMatchObject({ reason: "no_handler" });
    expect(seen[0]!.body.params).not.toHaveProperty("inputResponses");
    expect(seen[0]!.body.params).not.toHaveProperty("requestState");
  });
});

/** A server that answers every round with these inputRequests. */
const asking = (inputRequests: Record<string, unknown>) => fakeFetch((b) => json({ jsonrpc: "2.0", id: b.id, result: { resultType: "input_required", inputRequests, requestState: "S" } }));
const question = { method: "elicitation/create", params: { message: "?", requestedSchema: { type: "object", properties: {} } } };

describe("the client loop's own limits", () => {
  it("answers only kinds the caller declared: an undeclared ask ends the call before any handler runs", async () => {
    let sampled = 0;
    const send = createFetchSender("http://x/mcp", { capabilities: { elicitation: {} }, fetch: asking({ s: { method: "sampling/createMessage", params: { messages: [], maxTokens: 1 } } }).f });
    const handlers = {
      sample: () => {
        sampled++;
        return { role: "assistant" as const, content: { type: "text" as const, text: "" }, model: "m" };
      },
    };
    await expect(callWithInput(send, "tools/call", { name: "t" }, handlers)).rejects.toMatchObject({ reason: "undeclared_kind" });
    expect(sampled).toBe(0);
    // URL elicitation needs elicitation.url, form mode is not enough.
    const url = createFetchSender("http://x/mcp", {
      capabilities: { elicitation: {} },
      fetch: asking({ u: { method: "elicitation/create", params: { mode: "url", message: "go", url: "https://e.com" } } }).f,
    });
    await expect(callWithInput(url, "tools/call", { name: "t" }, { elicit: () => ({ action: "accept" }) })).rejects.toMatchObject({ reason: "undeclared_kind" });
  });

  it("caps the asks one round may carry (a server asking 5,000 things gets nothing)", async () => {
    let answered = 0;
    const many = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, question]));
    const send = createFetchSender("http://x/mcp", { capabilities: { elicitation: {} }, fetch: asking(many).f });
    await expect(
      callWithInput(
        send,
        "tools/call",
        { name: "t" },
        {
          elicit: () => {
            answered++;
            return { action: "decline" };
          },
        },
      ),
    ).rejects.toMatchObject({ reason: "too_many_asks" });
    expect(answered).toBe(0);
    const few = createFetchSender("http://x/mcp", { capabilities: { elicitation: {} }, fetch: asking({ a: question, b: question, c: question }).f });
    await expect(callWithInput(few, "tools/call", { name: "t" }, { elicit: () => ({ action: "decline" }) }, { maxAsksPerRound: 2 })).rejects.toMatchObject({ reason: "too_many_asks" });
  });

  it("aborts the other handlers of a round when one fails", async () => {
    const send = createFetchSender("http://x/mcp", { capabilities: { elicitation: {} }, fetch: asking({ fails: question, waits: question }).f });
    let waited: Promise<string> | undefined;
    const handlers = {
      elicit: (_p: unknown, ask: { key: string; signal: AbortSignal }) => {
        if (ask.key === "fails") return Promise.reject(new Error("user closed the dialog"));
        waited = new Promise<string>((resolve) => ask.signal.addEventListener("abort", () => resolve(`aborted: ${(ask.signal.reason as Error).message}`)));
        return waited.then(() => ({ action: "cancel" as const }));
      },
    };
    await expect(callWithInput(send, "tools/call", { name: "t" }, handlers)).rejects.toThrow("user closed the dialog");
    expect(await waited).toBe("aborted: user closed the dialog");
  });
});

describe("Mcp-Name per SEP-2243", () => {
  it("encodes what a header cannot carry as it is", () => {
    expect(encodeHeaderValue("book_flight")).toBe("book_flight");
    expect(encodeHeaderValue("notes://日本")).toBe(`=?base64?${Buffer.from("notes://日本").toString("base64")}?=`);
    expect(encodeHeaderValue(" padded")).toMatch(/^=\?base64\?/);
    expect(encodeHeaderValue("line\nbreak")).toMatch(/^=\?base64\?/);
    expect(encodeHeaderValue("=?base64?abc?=")).toBe(`=?base64?${Buffer.from("=?base64?abc?=").toString("base64")}?=`);
  });

  it("reads a resource with a non-ASCII uri from the SDK server", async () => {
    const notes = resource({
      uri: "notes://日本",
      name: "nihon",
      *run() {
        return "こんにちは";
      },
    });
    const runtime = createRuntime({ state: { keys: [testKey("n", 1)] } });
    const app = createMcpHandler(() => {
      const server = new McpServer({ name: "n", version: "1" });
      register(server, [notes], { runtime });
      return server;
    });
    const send = createFetchSender("http://x/mcp", { capabilities: {}, fetch: (url, init) => app.fetch(new Request(url, init)) });
    const result = (await callWithInput(send, "resources/read", { uri: "notes://日本" }, {})) as { contents: Array<{ text: string }> };
    expect(result.contents[0]!.text).toBe("こんにちは");
  });
});

describe("following a task", () => {
  it("polls without piling listeners on the caller's signal", async () => {
    let polls = 0;
    const { f } = fakeFetch((b) => {
      const method = (b as unknown as { method: string }).method;
      // A server that pushes no task status: the client polls.
      if (method === "subscriptions/listen") return json({ jsonrpc: "2.0", id: b.id, error: { code: -32601, message: "Method not found" } });
      if (method === "tools/call")
        return json({
          jsonrpc: "2.0",
          id: b.id,
          result: { resultType: "task", taskId: "t1", status: "working", createdAt: new Date().toISOString(), lastUpdatedAt: new Date().toISOString(), ttlMs: 60_000, pollIntervalMs: 5 },
        });
      const done = ++polls > 30;
      return json({
        jsonrpc: "2.0",
        id: b.id,
        result: {
          resultType: "complete",
          taskId: "t1",
          status: done ? "completed" : "working",
          createdAt: new Date().toISOString(),
          lastUpdatedAt: new Date().toISOString(),
          ttlMs: 60_000,
          pollIntervalMs: 5,
          ...(done ? { result: { resultType: "complete", content: [{ type: "text", text: "ok" }] } } : {}),
        },
      });
    });
    const send = createFetchSender("http://x/mcp", { capabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } }, fetch: f });
    const controller = new AbortController();
    let added = 0;
    let removed = 0;
    const add = controller.signal.addEventListener.bind(controller.signal);
    const remove = controller.signal.removeEventListener.bind(controller.signal);
    controller.signal.addEventListener = ((...a: Parameters<typeof add>) => (added++, add(...a))) as typeof add;
    controller.signal.removeEventListener = ((...a: Parameters<typeof remove>) => (removed++, remove(...a))) as typeof remove;
    // The caller lowers the poll floor on purpose here (the server suggests 5 ms).
    const result = await callWithInput(send, "tools/call", { name: "t" }, {}, { signal: controller.signal, minPollIntervalMs: 0 });
    expect(result).toMatchObject({ content: [{ text: "ok" }] });
    expect(polls).toBe(31);
    expect(added).toBeGreaterThanOrEqual(30);
    expect(added - removed).toBe(0);
  });
});

describe("the client's bounds against a hostile server", () => {
  const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } };
  const taskServer = (pollIntervalMs: number, doneAfter: number) => {
    const polls: number[] = [];
    const cancels: string[] = [];
    const now = () => new Date().toISOString();
    const { f } = fakeFetch((b) => {
      const method = (b as unknown as { method: string }).method;
      const base = { taskId: "t1", createdAt: now(), lastUpdatedAt: now(), ttlMs: 60_000, pollIntervalMs };
      if (method === "tools/call") return json({ jsonrpc: "2.0", id: b.id, result: { resultType: "task", status: "working", ...base } });
      if (method === "tasks/cancel") return (cancels.push("t1"), json({ jsonrpc: "2.0", id: b.id, result: { resultType: "complete" } }));
      if (method === "subscriptions/listen") return json({ jsonrpc: "2.0", id: b.id, error: { code: -32601, message: "Method not found" } });
      polls.push(performance.now());
      const done = polls.length > doneAfter;
      return json({
        jsonrpc: "2.0",
        id: b.id,
        result: { resultType: "complete", status: done ? "completed" : "working", ...base, ...(done ? { result: { resultType: "complete", content: [{ type: "text", text: "ok" }] } } : {}) },
      });
    });
    return { send: createFetchSender("http://x/mcp", { capabilities: TASKS, fetch: f }), polls, cancels };
  };

  it("never polls faster than the floor, whatever pollIntervalMs the server names", async () => {
    const { send, polls } = taskServer(1, 3);
    await callWithInput(send, "tools/call", { name: "t" }, {});
    expect(polls).toHaveLength(4);
    // Timers never fire early: each gap is at least the 100 ms floor (a busy machine only widens it).
    for (let i = 1; i < polls.length; i++) expect(polls[i]! - polls[i - 1]!).toBeGreaterThanOrEqual(99);
  });

  it("an overall deadline ends the call with `deadline`, and the task is cancelled", async () => {
    const { send, cancels } = taskServer(10, Number.POSITIVE_INFINITY);
    await expect(callWithInput(send, "tools/call", { name: "t" }, {}, { deadlineMs: 250 })).rejects.toMatchObject({ reason: "deadline" });
    expect(cancels).toEqual(["t1"]);
    await expect(callWithInput(send, "tools/call", { name: "t" }, {}, { deadlineMs: 0 })).rejects.toThrow(/deadlineMs must be a positive number/);
  });

  it("reads no response body past maxResponseBytes, declared or streamed", async () => {
    const big = JSON.stringify({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "x".repeat(5000) }] } });
    const declared = createFetchSender("http://x/mcp", { capabilities: {}, maxResponseBytes: 1024, fetch: fakeFetch(() => json(JSON.parse(big))).f });
    await expect(declared("tools/call", { name: "t" })).rejects.toMatchObject({ reason: "transport", message: expect.stringMatching(/larger than maxResponseBytes \(1024\)/) });
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(512).fill(32));
      },
    });
    const streamed = createFetchSender("http://x/mcp", {
      capabilities: {},
      maxResponseBytes: 4096,
      fetch: fakeFetch(() => new Response(endless, { headers: { "content-type": "application/json" } })).f,
    });
    await expect(streamed("tools/call", { name: "t" })).rejects.toMatchObject({ reason: "transport" });
    expect(pulled).toBeLessThan(20); // it stopped reading an endless body
    expect(() => createFetchSender("http://x/mcp", { capabilities: {}, maxResponseBytes: 0 })).toThrow(/maxResponseBytes must be a positive integer/);
  });
});

describe("the elicit handler's params", () => {
  it('narrow on mode: a form request without a mode arrives as mode "form", a URL request as "url"', async () => {
    const seen: string[] = [];
    const handlers: InputHandlers = {
      elicit: (params) => {
        switch (params.mode) {
          case "form":
            seen.push(`form ${Object.keys(params.requestedSchema.properties).join(",")}`);
            return { action: "accept", content: { name: "Ada" } };
          case "url":
            seen.push(`url ${params.url}`);
            return { action: "accept" };
          default: {
            const unreachable: never = params;
            throw new Error(`unexpected ${JSON.stringify(unreachable)}`);
          }
        }
      },
    };
    let round = 0;
    const send: Send = async (_method, params) => {
      round++;
      if (round === 1)
        return {
          resultType: "input_required",
          requestState: "s1",
          inputRequests: {
            // No mode: the specification's default, form.
            name: { method: "elicitation/create", params: { message: "Name?", requestedSchema: { type: "object", properties: { name: { type: "string" } } } } },
            login: { method: "elicitation/create", params: { mode: "url", message: "Sign in", url: "https://example.com/login" } },
          },
        };
      return { content: [{ type: "text", text: JSON.stringify(params.inputResponses) }] };
    };
    const result = await callWithInput<{ content: Array<{ text: string }> }>(send, "tools/call", { name: "t" }, handlers, { capabilities: { elicitation: { form: {}, url: {} } } });
    expect(seen.sort()).toEqual(["form name", "url https://example.com/login"]);
    expect(JSON.parse(result.content[0]!.text)).toEqual({ name: { action: "accept", content: { name: "Ada" } }, login: { action: "accept" } });
  });
});

describe("the client loop's idempotency key and retries", () => {
  const charged: string[] = [];
  const def = tool({
    name: "pay",
    description: "",
    input: z.object({ amount: z.number() }),
    *run({ amount }) {
      const id = yield* step("charge", () => (charged.push("c"), `ch_${charged.length}`));
      return `charged ${amount} as ${id}`;
    },
  });

  it("a reply lost after the server ran the first request: the retry carries the same key and gets the same answer, charged once", async () => {
    const runtime = createRuntime({ state: { keys: [testKey("loop-idem", 12)] }, onError: () => {} });
    const sent: Array<Record<string, unknown>> = [];
    let lose = true;
    const send = (async (_method: string, params: Record<string, unknown>) => {
      sent.push(params);
      const result = await runtime.callTool(def, params, {});
      if (lose) {
        lose = false;
        throw new ClientError("transport", "tools/call failed: socket hang up");
      }
      return result;
    }) as Send;
    charged.length = 0;
    const result = await callWithInput(send, "tools/call", { name: "pay", arguments: { amount: 3 } }, {});
    expect(textOf(result)).toBe("charged 3 as ch_1");
    expect(charged).toHaveLength(1);
    expect(sent).toHaveLength(2);
    const keyOf = (p: Record<string, unknown>) => (p._meta as { idempotencyKey?: unknown } | undefined)?.idempotencyKey;
    expect(keyOf(sent[0]!)).toEqual(expect.any(String));
    expect(keyOf(sent[1]!)).toBe(keyOf(sent[0]!));
    // Another call: another key.
    await callWithInput(send, "tools/call", { name: "pay", arguments: { amount: 3 } }, {});
    expect(keyOf(sent[2]!)).not.toBe(keyOf(sent[0]!));
    expect(charged).toHaveLength(2);
  });

  it("waits as long as the server asks while the first request still runs; sends no key with idempotencyKey: false; refuses a bad retries", async () => {
    const sent: Array<Record<string, unknown>> = [];
    let busy = 2;
    const send = (async (_method: string, params: Record<string, unknown>) => {
      sent.push(params);
      if (busy-- > 0) throw new ClientError("rpc_error", "busy", { code: -32603, message: "busy", data: { reason: "idempotency_in_progress", retryAfterMs: 5 } });
      return { content: [{ type: "text", text: "ok" }] };
    }) as Send;
    expect(textOf(await callWithInput(send, "tools/call", { name: "pay", arguments: {} }, {}, { idempotencyKey: "mine" }))).toBe("ok");
    expect(sent.map((p) => (p._meta as { idempotencyKey?: string }).idempotencyKey)).toEqual(["mine", "mine", "mine"]);
    busy = 5;
    await expect(callWithInput(send, "tools/call", { name: "pay", arguments: {} }, {}, { retries: 1 })).rejects.toMatchObject({ rpc: { data: { reason: "idempotency_in_progress" } } });
    busy = 0;
    await callWithInput(send, "tools/call", { name: "pay", arguments: {} }, {}, { idempotencyKey: false });
    expect(sent.at(-1)!._meta).toBeUndefined();
    await expect(callWithInput(send, "tools/call", { name: "pay", arguments: {} }, {}, { retries: -1 })).rejects.toThrow(/retries/);
  });

  it("rides out a store blip while following a task: tasks/get and tasks/update are sent again on store_unavailable, up to retries", async () => {
    const unavailable = () =>
      new ClientError("rpc_error", "store", { code: -32603, message: "The server's store is unavailable; try again later", data: { reason: "store_unavailable", retryAfterMs: 1 } });
    const task = { taskId: "t1", createdAt: "2026-12-05T00:00:00.000Z", lastUpdatedAt: "2026-12-05T00:00:00.000Z", ttlMs: 60_000, pollIntervalMs: 1 };
    const make = (blips: { get: number; update: number }) => {
      const sent: string[] = [];
      let gets = 0;
      const send = (async (method: string) => {
        sent.push(method);
        if (method === "tools/call") return { resultType: "task", status: "working", ...task };
        if (method === "tasks/update") {
          if (blips.update-- > 0) throw unavailable();
          return { resultType: "complete" };
        }
        // tasks/get: a blip, asking, a blip, done.
        if (blips.get-- > 0) throw unavailable();
        gets++;
        if (gets === 1)
          return {
            resultType: "complete",
            status: "input_required",
            ...task,
            inputRequests: { ok: { method: "elicitation/create", params: { mode: "form", message: "OK?", requestedSchema: { type: "object", properties: { ok: { type: "boolean" } } } } } },
          };
        return { resultType: "complete", status: "completed", ...task, result: { content: [{ type: "text", text: "done" }] } };
      }) as Send;
      return { send: Object.assign(send, { capabilities: { elicitation: {}, extensions: { "io.modelcontextprotocol/tasks": {} } } }), sent };
    };
    const handlers = { elicit: () => ({ action: "accept" as const, content: { ok: true } }) };
    const rode = make({ get: 2, update: 2 });
    expect(textOf(await callWithInput(rode.send, "tools/call", { name: "job", arguments: {} }, handlers, { minPollIntervalMs: 0 }))).toBe("done");
    expect(rode.sent).toEqual(["tools/call", "tasks/get", "tasks/get", "tasks/get", "tasks/update", "tasks/update", "tasks/update", "tasks/get"]);
    // The caller's bound: fewer repeats than the blip lasts end the call with the server's reason.
    const short = make({ get: 3, update: 0 });
    await expect(callWithInput(short.send, "tools/call", { name: "job", arguments: {} }, handlers, { retries: 2, minPollIntervalMs: 0 })).rejects.toMatchObject({
      rpc: { data: { reason: "store_unavailable" } },
    });
  });
});
