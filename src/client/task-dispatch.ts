import { PROTOCOL_VERSION } from "../wire/index.js";
import { createPoster, type FetchSenderOptions } from "./fetch-sender.js";

// Following a task with the official client: its wire codecs refuse a `tools/call` answered with
// `resultType: "task"` ("Unsupported result type 'task'"), so `@modelcontextprotocol/ext-tasks`
// takes a raw dispatch from its host for 2026-07-28 traffic — one that must send the headers a
// stateless server routes by (`Mcp-Method`, `Mcp-Name`, `MCP-Protocol-Version`). This is that
// dispatch, over `fetch`, with the framing ext-tasks puts in each request's `_meta`.

/** A JSON value, as ext-tasks types what it dispatches and gets back. */
export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** What a raw dispatch answers ext-tasks with. */
export type DispatchResponse = { readonly kind: "result"; readonly result: JsonValue } | { readonly kind: "error"; readonly error: { code: number; message: string; data?: JsonValue } };

/** The options `createTaskSessionFromClient` takes for 2026-07-28 traffic (spread them in). */
export interface TaskDispatch {
  rawDispatch: (request: JsonValue, options?: { readonly signal?: AbortSignal }) => Promise<DispatchResponse>;
  v2RequestFraming: { readonly protocolVersion: string; readonly clientInfo: Readonly<Record<string, JsonValue>>; readonly clientCapabilities: Readonly<Record<string, JsonValue>> };
}

/**
 * The raw dispatch and request framing `@modelcontextprotocol/ext-tasks` needs to follow tasks
 * through the official client against a stateless 2026-07-28 server: each request POSTed to
 * `url` with the headers the server routes by; `options` as `createFetchSender`'s (declare the
 * tasks extension in `capabilities`). A transport failure rejects (`ClientError`, `transport`);
 * a JSON-RPC error answers `{ kind: "error" }`.
 *
 * ```ts
 * const session = createTaskSessionFromClient(client, { endpointId: url, ...createTaskDispatch(url, { capabilities }), onInputRequest });
 * const outcome = await (await session.callTool("generate_report", { topic: "Q3" })).result();
 * ```
 */
export function createTaskDispatch(url: string | URL, options: FetchSenderOptions): TaskDispatch {
  const { post, clientInfo } = createPoster(url, options);
  return {
    async rawDispatch(request, dispatchOptions) {
      const { method, params } = (typeof request === "object" && request !== null && !Array.isArray(request) ? request : {}) as { method?: unknown; params?: unknown };
      if (typeof method !== "string") throw new TypeError("createTaskDispatch: a request is an object with a method");
      const fields = typeof params === "object" && params !== null && !Array.isArray(params) ? (params as Record<string, unknown>) : {};
      const message = await post(method, fields, dispatchOptions?.signal);
      return "error" in message ? { kind: "error", error: message.error as { code: number; message: string; data?: JsonValue } } : { kind: "result", result: message.result as JsonValue };
    },
    v2RequestFraming: { protocolVersion: PROTOCOL_VERSION, clientInfo, clientCapabilities: options.capabilities as Record<string, JsonValue> },
  };
}
