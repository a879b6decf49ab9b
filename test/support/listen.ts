import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { all, createMemoryStore, createRuntime, elicit, type Runtime, step, type Store, tool } from "mcp-yield";
import { register, withTaskStatus } from "mcp-yield/server";
import { z } from "zod";
import { sseData } from "../../src/util/sse.js";
import { testKey } from "./keys.js";
import { rpcRequest as httpRequest } from "./rpc-request.js";

// Helpers for tests of pushed task status: a task that waits on two asks, an instance serving
// listens in front of the SDK's handler, and raw requests read frame by frame.

export const TASKS = "io.modelcontextprotocol/tasks";
export const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";

const Confirm = z.object({ ok: z.boolean() });
/** A task that waits for two answers at once, then completes with both. */
export const twoAsks = tool({
  name: "two_asks",
  description: "",
  input: z.object({}),
  task: "required",
  *run() {
    const { a, b } = yield* all({ a: elicit("A?", Confirm, { key: "a" }), b: elicit("B?", Confirm, { key: "b" }) });
    return `a=${a.action === "accept" && a.content.ok} b=${b.action === "accept" && b.content.ok}`;
  },
});

/** A task that works for `ms` (its step stops when the task is cancelled), then completes. */
export const slowTask = tool({
  name: "slow",
  description: "",
  input: z.object({ ms: z.number().int().min(0).max(60_000) }),
  task: "required",
  async *run({ ms }) {
    yield* step(
      "work",
      (signal) =>
        new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, ms);
          signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
        }),
    );
    return `worked ${ms} ms`;
  },
});

export interface ListenInstance {
  runtime: Runtime;
  handler: ReturnType<typeof createMcpHandler>;
  close(): Promise<void>;
}

/** One instance: a runtime on `store` and an SDK handler with `withTaskStatus` in front (unless `plain`). */
export function listenInstance(options: { store?: Store; plain?: boolean; maxListens?: number; onError?: (e: unknown) => void } = {}): ListenInstance {
  const runtime = createRuntime({ state: { keys: [testKey("listen", 58)] }, store: options.store ?? createMemoryStore(), onError: options.onError ?? (() => {}) });
  const sdk = createMcpHandler(() => {
    const server = new McpServer({ name: "listen", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } });
    register(server, [twoAsks, slowTask], { runtime });
    return server;
  });
  const handler = options.plain
    ? sdk
    : withTaskStatus(sdk, runtime, { ...(options.maxListens !== undefined ? { maxListens: options.maxListens } : {}), ...(options.onError ? { onError: options.onError } : {}) });
  return {
    runtime,
    handler,
    close: async () => {
      await handler.close();
      await runtime.close();
    },
  };
}

const declared = { extensions: { [TASKS]: {} }, elicitation: {} };

/** A 2026-07-28 request over HTTP, declaring the tasks extension and elicitation unless told otherwise. */
export const rpcRequest = (id: number, method: string, params: Record<string, unknown>, capabilities: Record<string, unknown> = declared): Request => httpRequest(id, method, params, capabilities);

/** The JSON-RPC message of a response that is not a stream, or the last one of a stream. */
export async function rpcResult(response: Response): Promise<{ result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } }> {
  const type = response.headers.get("content-type") ?? "";
  if (!type.includes("text/event-stream")) return (await response.json()) as never;
  let last: unknown;
  for await (const data of sseData(response.body!)) last = JSON.parse(data);
  return last as never;
}

/** A stream's messages one by one, each within `ms` (or the test fails saying what it waited for). */
export function frames(response: Response) {
  const events = sseData(response.body!);
  return {
    async next(ms = 5_000): Promise<Record<string, unknown> | undefined> {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no frame within ${ms} ms`)), ms)));
      try {
        const next = await Promise.race([events.next(), timeout]);
        return next.done ? undefined : (JSON.parse(next.value) as Record<string, unknown>);
      } finally {
        clearTimeout(timer);
      }
    },
    close: () => void events.return(undefined),
  };
}

/** Start `two_asks` as a task for `authInfo`'s client; its id. */
export async function startTwoAsks(instance: ListenInstance, clientId?: string): Promise<string> {
  const response = await instance.handler.fetch(rpcRequest(1, "tools/call", { name: "two_asks", arguments: {} }), clientId === undefined ? undefined : { authInfo: authOf(clientId) });
  const message = await rpcResult(response);
  const taskId = message.result?.taskId;
  if (typeof taskId !== "string") throw new Error(`two_asks did not start a task: ${JSON.stringify(message)}`);
  return taskId;
}

export const authOf = (clientId: string) => ({ token: `t-${clientId}`, clientId, scopes: [] });
