import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";
import { toNodeHandler } from "@modelcontextprotocol/node";
import { afterEach, describe, expect, it } from "vitest";
import { authOf, frames, type ListenInstance, listenInstance, rpcRequest, rpcResult, startTwoAsks, SUBSCRIPTION_ID } from "../support/listen.js";

// withTaskStatus: `notifications/tasks` on `subscriptions/listen`, in front of the SDK's handler.
// The tasks extension's rules: acknowledge only the ids the caller owns, `-32021` without the
// extension, each frame the task as `tasks/get` answers it, nothing but task frames for them.

const open: ListenInstance[] = [];
afterEach(async () => {
  for (const instance of open.splice(0)) await instance.close();
});
const instance = (options?: Parameters<typeof listenInstance>[0]) => {
  const made = listenInstance(options);
  open.push(made);
  return made;
};

async function getTask(i: ListenInstance, taskId: string, clientId?: string) {
  const message = await rpcResult(await i.handler.fetch(rpcRequest(9, "tasks/get", { taskId }), clientId === undefined ? undefined : { authInfo: authOf(clientId) }));
  const { resultType: _r, _meta: _m, ...task } = message.result!;
  return task;
}
const update = async (i: ListenInstance, taskId: string, inputResponses: Record<string, unknown>) => rpcResult(await i.handler.fetch(rpcRequest(8, "tasks/update", { taskId, inputResponses })));
const withoutMeta = (params: unknown) => {
  const { _meta, ...rest } = params as Record<string, unknown>;
  return rest;
};

describe("subscriptions/listen with task ids", () => {
  it("acknowledges the task, then pushes each change as tasks/get answers it, and ends with the listen's result", async () => {
    const i = instance();
    const taskId = await startTwoAsks(i);
    await expect.poll(async () => (await getTask(i, taskId)).status, { timeout: 10_000 }).toBe("input_required");
    const response = await i.handler.fetch(rpcRequest(7, "subscriptions/listen", { notifications: { taskIds: [taskId] } }));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const stream = frames(response);
    expect(await stream.next()).toEqual({
      jsonrpc: "2.0",
      method: "notifications/subscriptions/acknowledged",
      params: { notifications: { taskIds: [taskId] }, _meta: { [SUBSCRIPTION_ID]: 7 } },
    });
    const first = (await stream.next())!;
    expect(first.method).toBe("notifications/tasks");
    expect((first.params as { _meta: unknown })._meta).toEqual({ [SUBSCRIPTION_ID]: 7 });
    expect(withoutMeta(first.params)).toEqual(await getTask(i, taskId));
    expect(Object.keys((first.params as { inputRequests: object }).inputRequests).sort()).toEqual(["a", "b"]);

    // A partial answer changes only the open asks: a frame for it too.
    await update(i, taskId, { a: { action: "accept", content: { ok: true } } });
    const partial = (await stream.next())!;
    expect(partial.params).toMatchObject({ status: "input_required" });
    expect(Object.keys((partial.params as { inputRequests: object }).inputRequests)).toEqual(["b"]);

    await update(i, taskId, { b: { action: "accept", content: { ok: false } } });
    let last = (await stream.next())!;
    while ((last.params as { status: string }).status !== "completed") last = (await stream.next())!;
    expect(withoutMeta(last.params)).toEqual(await getTask(i, taskId));
    expect(last.params).toMatchObject({ result: { content: [{ type: "text", text: "a=true b=false" }] } });
    // Every task ended: the listen's result closes the stream.
    expect(await stream.next()).toEqual({ jsonrpc: "2.0", id: 7, result: { resultType: "complete", _meta: { [SUBSCRIPTION_ID]: 7 } } });
    expect(await stream.next()).toBeUndefined();
  });

  it("acknowledges only the ids the caller owns: another's task and an unknown id are left out", async () => {
    const i = instance();
    const mine = await startTwoAsks(i, "alice");
    const theirs = await startTwoAsks(i, "bob");
    const response = await i.handler.fetch(rpcRequest(3, "subscriptions/listen", { notifications: { taskIds: [mine, theirs, "no-such-task"] } }), { authInfo: authOf("alice") });
    const stream = frames(response);
    expect(((await stream.next())!.params as { notifications: unknown }).notifications).toEqual({ taskIds: [mine] });
    expect(((await stream.next())!.params as { taskId: string }).taskId).toBe(mine);
    stream.close();

    // None owned: an acknowledgement without task ids, and the stream ends at once.
    const none = frames(await i.handler.fetch(rpcRequest(4, "subscriptions/listen", { notifications: { taskIds: [theirs] } }), { authInfo: authOf("alice") }));
    expect(((await none.next())!.params as { notifications: unknown }).notifications).toEqual({});
    expect(await none.next()).toMatchObject({ id: 4, result: { resultType: "complete" } });
    expect(await none.next()).toBeUndefined();
  });

  it("answers -32021 with the required capability when the request did not declare the tasks extension", async () => {
    const i = instance();
    const taskId = await startTwoAsks(i);
    const response = await i.handler.fetch(rpcRequest(5, "subscriptions/listen", { notifications: { taskIds: [taskId] } }, { elicitation: {} }));
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      jsonrpc: "2.0",
      id: 5,
      error: { code: -32021, message: expect.stringContaining("tasks extension"), data: { requiredCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } } },
    });
  });

  it.each([
    ["not a list", "abc"],
    ["a number in the list", [1]],
    ["an empty id", [""]],
    ["1,001 ids", Array.from({ length: 1001 }, (_, n) => `t${n}`)],
  ])("answers -32602 for task ids that are %s", async (_, taskIds) => {
    const i = instance();
    const message = await rpcResult(await i.handler.fetch(rpcRequest(6, "subscriptions/listen", { notifications: { taskIds } })));
    expect(message.error).toMatchObject({ code: -32602 });
  });

  it("leaves a listen without task ids, and every other request, to the SDK", async () => {
    const i = instance();
    const stream = frames(await i.handler.fetch(rpcRequest(2, "subscriptions/listen", { notifications: { toolsListChanged: true } })));
    expect(((await stream.next())!.params as { notifications: unknown }).notifications).toEqual({ toolsListChanged: true });
    i.handler.notify.toolsChanged();
    expect(await stream.next()).toMatchObject({ method: "notifications/tools/list_changed" });
    stream.close();
  });

  it("carries the SDK's kinds on the same stream: one acknowledgement of both, both kinds of frame, open after the tasks end", async () => {
    const i = instance();
    const taskId = await startTwoAsks(i);
    const stream = frames(await i.handler.fetch(rpcRequest(11, "subscriptions/listen", { notifications: { taskIds: [taskId], toolsListChanged: true } })));
    expect(((await stream.next())!.params as { notifications: unknown }).notifications).toEqual({ toolsListChanged: true, taskIds: [taskId] });
    expect(await stream.next()).toMatchObject({ method: "notifications/tasks", params: { taskId } });
    i.handler.notify.toolsChanged();
    expect(await stream.next()).toMatchObject({ method: "notifications/tools/list_changed", params: { _meta: { [SUBSCRIPTION_ID]: 11 } } });
    await update(i, taskId, { a: { action: "accept", content: { ok: true } }, b: { action: "accept", content: { ok: true } } });
    let frame = (await stream.next())!;
    while ((frame.params as { status?: string }).status !== "completed") frame = (await stream.next())!;
    // The tools part is still listened to: the stream stays open until the server closes.
    i.handler.notify.toolsChanged();
    expect(await stream.next()).toMatchObject({ method: "notifications/tools/list_changed" });
    await i.handler.close();
    expect(await stream.next()).toMatchObject({ id: 11, result: { resultType: "complete" } });
  });

  it("refuses listens past maxListens (-32603) and counts a closed one out", async () => {
    const i = instance({ maxListens: 1 });
    const taskId = await startTwoAsks(i);
    const controller = new AbortController();
    const first = await i.handler.fetch(new Request(rpcRequest(1, "subscriptions/listen", { notifications: { taskIds: [taskId] } }), { signal: controller.signal }));
    const stream = frames(first);
    await stream.next();
    const refused = await rpcResult(await i.handler.fetch(rpcRequest(2, "subscriptions/listen", { notifications: { taskIds: [taskId] } })));
    expect(refused.error).toEqual({ code: -32603, message: "Subscription limit reached" });
    controller.abort();
    stream.close();
    await expect
      .poll(async () => {
        const response = await i.handler.fetch(rpcRequest(3, "subscriptions/listen", { notifications: { taskIds: [taskId] } }));
        const ok = response.headers.get("content-type")?.includes("text/event-stream") ?? false;
        await response.body?.cancel();
        return ok;
      })
      .toBe(true);
  });

  it("over real HTTP, a client that goes away frees its listen (it no longer counts against maxListens)", async () => {
    const i = instance({ maxListens: 1 });
    const taskId = await startTwoAsks(i);
    const server = createServer(toNodeHandler(i.handler) as RequestListener);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
      const listen = async (signal?: AbortSignal) => {
        const request = rpcRequest(1, "subscriptions/listen", { notifications: { taskIds: [taskId] } });
        return fetch(url, { method: "POST", headers: request.headers, body: await request.text(), ...(signal ? { signal } : {}) });
      };
      const client = new AbortController();
      await (await listen(client.signal)).body!.getReader().read();
      expect(await rpcResult(await listen())).toMatchObject({ error: { code: -32603 } });
      client.abort();
      await expect
        .poll(async () => {
          const response = await listen();
          await response.body?.cancel();
          return response.headers.get("content-type") ?? "";
        })
        .toContain("text/event-stream");
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("without withTaskStatus the SDK acknowledges no task ids (what a client then polls for)", async () => {
    const i = instance({ plain: true });
    const taskId = await startTwoAsks(i);
    const stream = frames(await i.handler.fetch(rpcRequest(2, "subscriptions/listen", { notifications: { taskIds: [taskId] } })));
    expect(((await stream.next())!.params as { notifications: unknown }).notifications).toEqual({});
  });
});

describe("a listen's body, read once", () => {
  /** `request` with its length declared, as an HTTP server's request has it (an in-process Request declares none). */
  async function withLength(request: Request): Promise<Request> {
    const body = await request.text();
    const headers = new Headers(request.headers);
    headers.set("content-length", String(new TextEncoder().encode(body).byteLength));
    return new Request(request.url, { method: "POST", headers, body });
  }

  it.each([
    ["declared", true],
    ["not declared", false],
  ])("with its length %s, a listen with task ids is served and one without goes to the SDK", async (_, declared) => {
    const i = instance();
    const taskId = await startTwoAsks(i);
    const shaped = async (r: Request) => (declared ? withLength(r) : r);
    const tasks = frames(await i.handler.fetch(await shaped(rpcRequest(21, "subscriptions/listen", { notifications: { taskIds: [taskId] } }))));
    expect(((await tasks.next())!.params as { notifications: unknown }).notifications).toEqual({ taskIds: [taskId] });
    expect(await tasks.next()).toMatchObject({ method: "notifications/tasks", params: { taskId, status: "input_required" } });
    tasks.close();
    const sdk = frames(await i.handler.fetch(await shaped(rpcRequest(22, "subscriptions/listen", { notifications: { toolsListChanged: true } }))));
    expect(((await sdk.next())!.params as { notifications: unknown }).notifications).toEqual({ toolsListChanged: true });
    i.handler.notify.toolsChanged();
    expect(await sdk.next()).toMatchObject({ method: "notifications/tools/list_changed" });
    sdk.close();
  });

  it.each([
    ["declared", true],
    ["not declared", false],
  ])("not JSON, with its length %s: the SDK's parse error (-32700)", async (_, declared) => {
    const i = instance();
    const plain = rpcRequest(23, "subscriptions/listen", { notifications: { taskIds: ["t"] } });
    const broken = new Request(plain.url, { method: "POST", headers: plain.headers, body: '{"jsonrpc":"2.0","id":23,' });
    const response = await i.handler.fetch(declared ? await withLength(broken) : broken);
    expect(response.status).toBe(400);
    expect((await response.json()) as unknown).toMatchObject({ error: { code: -32700 } });
  });

  it("larger than the bound: the SDK's 413; longer than it declares: the SDK's unreadable body (-32700)", async () => {
    const i = instance();
    const big = () => rpcRequest(24, "subscriptions/listen", { notifications: { taskIds: ["t"] }, pad: "x".repeat(5 * 1024 * 1024) });
    const declared = await i.handler.fetch(await withLength(big()));
    expect(declared.status).toBe(413);
    expect((await i.handler.fetch(big())).status).toBe(413);
    // An HTTP server frames a body by its declared length; a Request built by hand can disagree.
    const lying = await withLength(big());
    lying.headers.set("content-length", "100");
    const response = await i.handler.fetch(lying);
    expect(response.status).toBe(400);
    expect((await response.json()) as unknown).toMatchObject({ error: { code: -32700 } });
  });
});
