import { afterEach, describe, expect, it } from "vitest";
import { callWithInput, createFetchSender, type InputHandlers } from "mcp-yield/client";
import { type ListenInstance, listenInstance, TASKS } from "../support/listen.js";

// The client loop hears a followed task's status pushed (subscriptions/listen) when the server
// pushes it, and then sends tasks/get only as a slow backstop; a stream that breaks off is
// opened again; a server that does not push is polled as before.

const open: ListenInstance[] = [];
afterEach(async () => {
  for (const instance of open.splice(0)) await instance.close();
});

const handlers: InputHandlers = { elicit: () => ({ action: "accept", content: { ok: true } }) };

/** A sender to `instance` that counts requests by method and can break the listens' streams. */
function countingSender(instance: ListenInstance, options: { breakListenAfterBytes?: number; refuseListens?: { times: number; reason: string } } = {}) {
  const counts = new Map<string, number>();
  let broken = 0;
  const fetchIn = async (url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(url, init);
    const method = request.headers.get("mcp-method") ?? "";
    counts.set(method, (counts.get(method) ?? 0) + 1);
    const refuse = options.refuseListens;
    if (method === "subscriptions/listen" && refuse !== undefined && counts.get(method)! <= refuse.times) {
      // What the server answers when the listen's read of the task failed (its store timed out).
      const { id } = (await request.json()) as { id: unknown };
      const error = { code: -32603, message: "The server's store is unavailable; try again later", data: { reason: refuse.reason } };
      return Response.json({ jsonrpc: "2.0", id, error });
    }
    const response = await instance.handler.fetch(request);
    const limit = options.breakListenAfterBytes;
    if (method !== "subscriptions/listen" || limit === undefined || broken > 0 || response.body === null) return response;
    // The first listen's stream breaks off (a proxy timing out, a connection reset) after `limit` bytes.
    broken++;
    const reader = response.body.getReader();
    let seen = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        seen += value.byteLength;
        controller.enqueue(value);
        if (seen >= limit) {
          await reader.cancel();
          controller.error(new TypeError("terminated"));
        }
      },
      cancel: () => reader.cancel(),
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
  const send = createFetchSender("http://in-process/mcp", { capabilities: { elicitation: {}, extensions: { [TASKS]: {} } }, fetch: fetchIn as typeof fetch });
  return { send, counts, get: (method: string) => counts.get(method) ?? 0 };
}

describe("the client loop listening for a task's status", () => {
  it("follows a task to its end on pushed frames alone: no tasks/get", async () => {
    const instance = listenInstance();
    open.push(instance);
    const sender = countingSender(instance);
    const seen: string[] = [];
    const result = await callWithInput<{ content: Array<{ text: string }> }>(sender.send, "tools/call", { name: "two_asks", arguments: {} }, handlers, {
      onTask: (task) => seen.push(task.status),
      minPollIntervalMs: 10,
    });
    expect(result.content[0]!.text).toBe("a=true b=true");
    expect(sender.get("tasks/get")).toBe(0);
    expect(sender.get("subscriptions/listen")).toBe(1);
    expect(sender.get("tasks/update")).toBe(1);
    expect(seen[0]).toBe("input_required");
    expect(seen.at(-1)).toBe("completed");
  });

  it("opens the listen again when its stream breaks off, and still completes without polling", async () => {
    const instance = listenInstance();
    open.push(instance);
    // The acknowledgement and part of the first frame get through, then the stream breaks.
    const sender = countingSender(instance, { breakListenAfterBytes: 300 });
    const result = await callWithInput<{ content: Array<{ text: string }> }>(sender.send, "tools/call", { name: "two_asks", arguments: {} }, handlers, { minPollIntervalMs: 10 });
    expect(result.content[0]!.text).toBe("a=true b=true");
    expect(sender.get("subscriptions/listen")).toBe(2);
    expect(sender.get("tasks/get")).toBe(0);
  });

  it("opens the listen again when the server refuses it for a moment (its store unavailable), and completes without polling", async () => {
    const instance = listenInstance();
    open.push(instance);
    const sender = countingSender(instance, { refuseListens: { times: 2, reason: "store_unavailable" } });
    const result = await callWithInput<{ content: Array<{ text: string }> }>(sender.send, "tools/call", { name: "two_asks", arguments: {} }, handlers, { minPollIntervalMs: 10 });
    expect(result.content[0]!.text).toBe("a=true b=true");
    expect(sender.get("subscriptions/listen")).toBe(3);
    expect(sender.get("tasks/get")).toBe(0);
  });

  it("polls when the server refuses the listen for a reason a repeat does not get past", async () => {
    const instance = listenInstance();
    open.push(instance);
    const sender = countingSender(instance, { refuseListens: { times: 1, reason: "store_misconfigured" } });
    const result = await callWithInput<{ content: Array<{ text: string }> }>(sender.send, "tools/call", { name: "two_asks", arguments: {} }, handlers, { minPollIntervalMs: 10 });
    expect(result.content[0]!.text).toBe("a=true b=true");
    expect(sender.get("subscriptions/listen")).toBe(1);
    expect(sender.get("tasks/get")).toBeGreaterThan(0);
  });

  it("polls as before when the server does not push task status (the SDK's handler alone)", async () => {
    const instance = listenInstance({ plain: true });
    open.push(instance);
    const sender = countingSender(instance);
    const result = await callWithInput<{ content: Array<{ text: string }> }>(sender.send, "tools/call", { name: "two_asks", arguments: {} }, handlers, { minPollIntervalMs: 10 });
    expect(result.content[0]!.text).toBe("a=true b=true");
    expect(sender.get("subscriptions/listen")).toBe(1);
    expect(sender.get("tasks/get")).toBeGreaterThan(0);
  });

  it("polls when told not to listen (listen: false)", async () => {
    const instance = listenInstance();
    open.push(instance);
    const sender = countingSender(instance);
    await callWithInput(sender.send, "tools/call", { name: "two_asks", arguments: {} }, handlers, { minPollIntervalMs: 10, listen: false });
    expect(sender.get("subscriptions/listen")).toBe(0);
    expect(sender.get("tasks/get")).toBeGreaterThan(0);
  });

  it("sends tasks/cancel and stops listening when the caller aborts", async () => {
    const instance = listenInstance();
    open.push(instance);
    const sender = countingSender(instance);
    const controller = new AbortController();
    const seen: string[] = [];
    const call = callWithInput(sender.send, "tools/call", { name: "slow", arguments: { ms: 30_000 } }, handlers, { signal: controller.signal, onTask: (t) => seen.push(t.status) });
    // Waiting for the next frame (the backstop's poll is 10 s away) when the caller aborts.
    await expect.poll(() => seen.length).toBe(1);
    controller.abort();
    await expect(call).rejects.toMatchObject({ reason: "aborted" });
    expect(sender.get("tasks/cancel")).toBe(1);
    expect(sender.get("tasks/get")).toBe(0);
  });
});
