import type { AuthInfo } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { Runtime } from "../runtime/runtime.js";
import type { TaskWatchHandle } from "../tasks/watch.js";
import { readBoundedText } from "../util/bounded-body.js";
import { sseData, sseFrame } from "../util/sse.js";
import { CLIENT_CAPABILITIES_KEY, ErrorCode, type GetTaskResult, ProtocolError } from "../wire/index.js";

// server/task-status.ts owns `notifications/tasks` over HTTP: a `subscriptions/listen` naming
// `notifications.taskIds` is answered here, in front of the SDK's handler, which honours only the
// core notification kinds (it would acknowledge no task ids). The rest of such a listen still goes
// to the SDK — its checks (headers, protocol version, params) and the kinds it honours — and its
// stream is carried on inside this one: one acknowledgement naming both, then both kinds of
// notification. Frames come from the runtime (tasks/watch.ts): the task as `tasks/get` answers
// it, whichever instance changed it. Nothing is kept between requests: a client that reconnects
// listens again and first gets each task as it is.

/** The part of the SDK's `createMcpHandler` result this wraps. */
export interface McpFetchHandler {
  fetch: (request: Request, options?: { authInfo?: AuthInfo; parsedBody?: unknown }) => Promise<Response>;
  close: () => Promise<void>;
}

/** Options of `withTaskStatus`. */
export interface TaskStatusOptions {
  /**
   * Who the caller is — the same principal `register` binds tasks to (there its `principal`
   * option). Default: the OAuth client id of the request's `authInfo`, as `register`'s default.
   */
  principal?: (authInfo: AuthInfo | undefined, request: Request) => string | undefined;
  /** Most listens with task ids open at once on this handler; more are refused (`-32603`). Default 1024. */
  maxListens?: number;
  /** A keep-alive comment is sent this often on an open listen. Default 15000 ms. */
  keepAliveMs?: number;
  /** Listen request bodies over this are left to the SDK (which refuses them). Default 1 MiB. */
  maxRequestBodySize?: number;
  /** Told of what went wrong on a listen (a frame that could not be sent, the SDK's stream failing). */
  onError?: (error: unknown) => void;
}

const SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId";
/** Why the SDK's part of a listen is stopped: ours ended. One reason for all (no DOMException, with its stack, per listen). */
const LISTEN_ENDED = new Error("mcp-yield: the listen ended");

/** A listen request that names task ids (anything else goes to the SDK untouched). */
const taskListen = z.object({
  jsonrpc: z.literal("2.0"),
  id: z.union([z.string(), z.number()]),
  method: z.literal("subscriptions/listen"),
  params: z.looseObject({
    notifications: z.looseObject({ taskIds: z.unknown() }).refine((n) => n.taskIds !== undefined),
    _meta: z.record(z.string(), z.unknown()).optional(),
  }),
});

/** The SDK's first event on a listen: its acknowledgement, with what it honours. */
const acknowledgement = z.looseObject({
  method: z.literal("notifications/subscriptions/acknowledged"),
  params: z.looseObject({ notifications: z.record(z.string(), z.unknown()) }),
});

const errorResponse = (status: number, id: string | number | null, error: { code: number; message: string; data?: unknown }) => Response.json({ jsonrpc: "2.0", id, error }, { status });

/**
 * Serve `notifications/tasks` on `subscriptions/listen` in front of an SDK handler: a listen
 * naming `notifications.taskIds` acknowledges those the caller owns (on any instance sharing the
 * store) and then streams each as `tasks/get` would answer it — first as it is, then at each
 * change — until all have ended, when the stream closes with the listen's result. `-32021` when
 * the request did not declare the tasks extension; every other request goes to `handler`.
 *
 * ```ts
 * const handler = withTaskStatus(createMcpHandler(factory), runtime);
 * ```
 */
export function withTaskStatus<H extends McpFetchHandler>(handler: H, runtime: Runtime, options: TaskStatusOptions = {}): H {
  const principalOf = options.principal ?? ((authInfo) => authInfo?.clientId);
  const maxListens = options.maxListens ?? 1024;
  const keepAliveMs = options.keepAliveMs ?? 15_000;
  const maxBody = options.maxRequestBodySize ?? 1024 * 1024;
  const report = (error: unknown) => {
    try {
      options.onError?.(error);
    } catch {
      // a failing hook changes nothing here
    }
  };
  const open = new Set<(graceful: boolean) => void>();

  /**
   * A listen's body, read once: parsed (undefined when it is not JSON or could not be read), and
   * the request to hand on beside it. The request's own body is read when its length is declared
   * within the bound (the SDK then gets the parsed body and reads nothing); otherwise a clone is,
   * and a listen not served here reaches the SDK whole, read (or refused) as without us.
   */
  async function readListen(request: Request, parsedBody: unknown): Promise<{ body: unknown; forward: Request; unreadable?: true }> {
    if (parsedBody !== undefined) return { body: parsedBody, forward: request };
    const declared = Number(request.headers.get("content-length"));
    const direct = request.headers.has("content-length") && Number.isSafeInteger(declared) && declared <= maxBody;
    const text = await readBoundedText(direct ? request : request.clone(), maxBody).catch(() => undefined);
    // The request's own body, longer than it declared or broken off: nothing is left to hand on.
    if (text === undefined && direct) return { body: undefined, forward: request, unreadable: true };
    if (text === undefined) return { body: undefined, forward: request };
    try {
      return { body: JSON.parse(text), forward: request };
    } catch {
      // Not JSON: the SDK answers with its own parse error, from the bytes as they came.
      return { body: undefined, forward: direct ? new Request(request.url, { method: request.method, headers: request.headers, body: text, signal: request.signal }) : request };
    }
  }

  async function serveListen(request: Request, message: z.infer<typeof taskListen>, authInfo: AuthInfo | undefined): Promise<Response> {
    const { id, params } = message;
    const capabilities = params._meta?.[CLIENT_CAPABILITIES_KEY];
    const principal = principalOf(authInfo, request);
    const info = { clientCapabilities: capabilities, signal: request.signal, ...(principal !== undefined ? { principal } : {}) };
    if (open.size >= maxListens) {
      report(new Error(`subscriptions/listen refused: ${maxListens} listens with task ids are open, the limit`));
      return errorResponse(200, id, { code: ErrorCode.InternalError, message: "Subscription limit reached" });
    }

    // The rest of the listen goes to the SDK first: its checks (headers, protocol version, the
    // filter), and the kinds it honours. The runtime then checks the capability and the task ids.
    const { taskIds: _ids, ...others } = params.notifications;
    const forwardedBody = { ...message, params: { ...params, notifications: others } };
    // With no other kinds asked for, the SDK honours none and its stream ends after its
    // acknowledgement: it gets this very request (its signal is the client's) and the body parsed.
    // Otherwise a request of its own, whose signal ends the SDK's stream when this one ends.
    const upstream = Object.keys(others).length === 0 ? undefined : new AbortController();
    const forwarded = upstream === undefined ? request : new Request(request.url, { method: "POST", headers: request.headers, body: JSON.stringify(forwardedBody), signal: upstream.signal });
    const sdk = await handler.fetch(forwarded, { ...(authInfo !== undefined ? { authInfo } : {}), parsedBody: forwardedBody });
    if (!sdk.ok || sdk.body === null || !(sdk.headers.get("content-type") ?? "").includes("text/event-stream")) {
      upstream?.abort(LISTEN_ENDED);
      return sdk;
    }
    const sdkEvents = sseData(sdk.body);
    const first = await sdkEvents.next().catch(() => undefined);
    const ack = first === undefined || first.done ? undefined : acknowledgement.safeParse(safeJson(first.value));
    if (!ack?.success) {
      upstream?.abort(LISTEN_ENDED);
      void sdkEvents.return(undefined);
      report(new Error("subscriptions/listen: the SDK's stream did not start with its acknowledgement"));
      return errorResponse(200, id, { code: ErrorCode.InternalError, message: "Internal error" });
    }
    const sdkHonours = Object.keys(ack.data.params.notifications).length > 0;

    const encoder = new TextEncoder();
    let out: ReadableStreamDefaultController<Uint8Array> | undefined;
    let closed = false;
    let watch: TaskWatchHandle | undefined;
    let watchEnded = false;
    let keepAlive: ReturnType<typeof setInterval> | undefined;
    // Frames heard before the stream starts (a change read while the watch was being set up) wait for the acknowledgement.
    const early: string[] = [];
    const write = (frame: string) => {
      if (closed) return;
      if (out === undefined) return void early.push(frame);
      try {
        out.enqueue(encoder.encode(frame));
      } catch (error) {
        report(error);
      }
    };
    const stamp = (meta: unknown) => ({ ...(typeof meta === "object" && meta !== null ? meta : {}), [SUBSCRIPTION_ID_KEY]: id });
    const teardown = (graceful: boolean) => {
      if (closed) return;
      if (graceful) write(sseFrame({ jsonrpc: "2.0", id, result: { resultType: "complete", _meta: stamp(undefined) } }));
      closed = true;
      open.delete(teardown);
      watch?.close();
      clearInterval(keepAlive);
      upstream?.abort(LISTEN_ENDED);
      void sdkEvents.return(undefined);
      try {
        out?.close();
      } catch {
        // already closed by its reader
      }
    };
    const frame = (task: GetTaskResult) => {
      const { resultType: _r, _meta, ...fields } = task;
      write(sseFrame({ jsonrpc: "2.0", method: "notifications/tasks", params: { ...fields, _meta: stamp(_meta) } }));
    };
    const sink = {
      frame,
      ended: () => {
        watchEnded = true;
        if (!sdkHonours && out !== undefined) teardown(true);
      },
    };
    try {
      watch = await runtime.listenTasks(params, info, sink);
    } catch (error) {
      upstream?.abort(LISTEN_ENDED);
      void sdkEvents.return(undefined);
      return protocolErrorResponse(id, error);
    }
    const acknowledged = watch.taskIds;
    const notifications = { ...ack.data.params.notifications, ...(acknowledged.length > 0 ? { taskIds: acknowledged } : {}) };

    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        out = controller;
        write(sseFrame({ ...ack.data, params: { ...ack.data.params, notifications, _meta: stamp(ack.data.params._meta) } }));
        for (const frame of early.splice(0)) write(frame);
        open.add(teardown);
        if (acknowledged.length === 0) watchEnded = true;
        if (watchEnded && !sdkHonours) return teardown(true);
        keepAlive = setInterval(() => write(": keepalive\n\n"), keepAliveMs);
        keepAlive.unref?.();
        watch?.begin();
        void pumpSdk();
      },
      cancel() {
        teardown(false);
      },
    });

    /** The SDK's notifications, carried on; its closing result ends this stream too once the tasks have nothing more to send. */
    async function pumpSdk(): Promise<void> {
      try {
        for await (const data of sdkEvents) {
          if (closed) return;
          const parsed = safeJson(data) as { method?: unknown; id?: unknown } | undefined;
          if (parsed === undefined) continue;
          if (typeof parsed.method === "string") write(`event: message\ndata: ${data}\n\n`);
          else if (parsed.id === id && sdkHonours) return teardown(true); // the SDK ended it (shutting down)
        }
      } catch (error) {
        if (!closed) report(error);
      }
      if (!closed && sdkHonours) teardown(watchEnded);
    }

    if (request.signal.aborted) teardown(false);
    else request.signal.addEventListener("abort", () => teardown(false), { once: true });
    return new Response(stream, {
      status: 200,
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache, no-transform", connection: "keep-alive", "x-accel-buffering": "no" },
    });
  }

  function protocolErrorResponse(id: string | number, error: unknown): Response {
    if (error instanceof ProtocolError) return errorResponse(error.code === ErrorCode.MissingClientCapability ? 400 : 200, id, error.toJSON());
    report(error);
    return errorResponse(200, id, { code: ErrorCode.InternalError, message: "Internal error" });
  }

  return {
    ...handler,
    async fetch(request, requestOptions) {
      if (request.method !== "POST" || request.headers.get("mcp-method") !== "subscriptions/listen") return handler.fetch(request, requestOptions);
      const { body, forward, unreadable } = await readListen(request, requestOptions?.parsedBody);
      if (unreadable) return errorResponse(400, null, { code: ErrorCode.ParseError, message: "Parse error: the request body could not be read" });
      const message = body === undefined ? undefined : taskListen.safeParse(body);
      if (message?.success) return serveListen(forward, message.data, requestOptions?.authInfo);
      return handler.fetch(forward, { ...requestOptions, ...(body !== undefined ? { parsedBody: body } : {}) });
    },
    async close() {
      for (const teardown of [...open]) teardown(true);
      await handler.close();
    },
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
