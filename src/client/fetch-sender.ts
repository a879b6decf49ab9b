import { z } from "zod";
import { readBoundedText } from "../util/bounded-body.js";
import { CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, type ClientCapabilities, PROTOCOL_VERSION, PROTOCOL_VERSION_KEY } from "../wire/index.js";
import { integerOption } from "../util/options.js";
import { ClientError } from "./errors.js";
import type { OpenRequest, Send } from "./types.js";

/** Options of `createFetchSender`. */
export interface FetchSenderOptions {
  clientInfo?: { name: string; version: string };
  /** Declared on every request (this is what the server may ask for). */
  capabilities: ClientCapabilities;
  headers?: Record<string, string>;
  fetch?: typeof fetch;
  /** Per-request timeout in ms. Default 60000. */
  timeoutMs?: number;
  /** Largest response body read, in bytes; a larger one ends the request (`transport`). Default 16 MiB. */
  maxResponseBytes?: number;
}

/** The body as text, read no further than `max` bytes (a server cannot make the client buffer without bound). */
async function boundedText(response: Response, max: number): Promise<string> {
  const text = await readBoundedText(response, max);
  if (text === undefined) throw new ClientError("transport", `HTTP ${response.status}: the response body is larger than maxResponseBytes (${max})`);
  return text;
}

const jsonRpcResponse = z.union([
  z.object({ jsonrpc: z.literal("2.0"), id: z.union([z.string(), z.number()]), result: z.unknown() }),
  z.object({ jsonrpc: z.literal("2.0"), id: z.union([z.string(), z.number(), z.null()]), error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }) }),
]);
/** A JSON-RPC response as read back: a result or an error. */
export type JsonRpcResponse = z.infer<typeof jsonRpcResponse>;

/** The JSON-RPC response for `id` out of a JSON body or an SSE stream (validated). */
async function readResponse(response: Response, id: number, maxBytes: number): Promise<JsonRpcResponse> {
  const type = response.headers.get("content-type") ?? "";
  const text = await boundedText(response, maxBytes);
  const candidates = type.includes("text/event-stream")
    ? text
        .split(/\r?\n\r?\n/)
        .map((event) =>
          event
            .split(/\r?\n/)
            .filter((l) => l.startsWith("data:"))
            .map((l) => l.slice(5).trimStart())
            .join("\n"),
        )
        .filter((d) => d !== "")
    : [text];
  for (const candidate of candidates) {
    let message: unknown;
    try {
      message = JSON.parse(candidate);
    } catch {
      continue;
    }
    const parsed = jsonRpcResponse.safeParse(message);
    if (!parsed.success) continue;
    // An error without an id answers a request the server could not even read (e.g. HTTP 413).
    if (parsed.data.id === id || ("error" in parsed.data && parsed.data.id === null)) return parsed.data;
  }
  throw new ClientError("transport", `HTTP ${response.status}: no JSON-RPC response for request ${id}${text ? `: ${text.slice(0, 200)}` : ""}`);
}

const SENTINEL_PREFIX = "=?base64?";
const SENTINEL_SUFFIX = "?=";

/**
 * A header value per SEP-2243: printable ASCII without surrounding whitespace goes as it is;
 * anything else — non-ASCII, control characters, leading or trailing whitespace, or a value
 * that itself looks encoded — as `=?base64?<standard Base64 of its UTF-8>?=`.
 */
export function encodeHeaderValue(value: string): string {
  const plain = /^[\x20-\x7E]*$/.test(value) && !/^[ \t]|[ \t]$/.test(value) && !(value.startsWith(SENTINEL_PREFIX) && value.endsWith(SENTINEL_SUFFIX));
  if (plain) return value;
  let binary = "";
  for (const byte of new TextEncoder().encode(value)) binary += String.fromCharCode(byte);
  return `${SENTINEL_PREFIX}${btoa(binary)}${SENTINEL_SUFFIX}`;
}

/** What `Mcp-Name` mirrors: the task id for `tasks/*`, else the tool/prompt name or resource uri. */
function nameOf(method: string, params: Record<string, unknown>): string | undefined {
  const value = method.startsWith("tasks/") ? params.taskId : (params.name ?? params.uri);
  return typeof value === "string" ? value : undefined;
}

/**
 * A fetch failure in words, with its cause: undici says only "fetch failed" and keeps what
 * happened (ECONNREFUSED, a reset, a DNS error, a timeout) in `cause`, which callers need.
 */
function describeFailure(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error ? (error.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  if (cause === undefined || cause === null) return message;
  const detail =
    typeof cause.code === "string" ? `${cause.code}${typeof cause.message === "string" && !cause.message.includes(cause.code) ? ` ${cause.message}` : ""}` : String(cause.message ?? cause);
  return `${message} (${detail})`;
}

/** One JSON-RPC request POSTed as stateless 2026-07-28 HTTP wants it; its response, validated. */
export type PostRequest = (method: string, params: Record<string, unknown>, signal?: AbortSignal) => Promise<JsonRpcResponse>;

/**
 * POSTs over plain `fetch` speaking stateless 2026-07-28 HTTP: every request carries the `_meta`
 * envelope and the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers (the name encoded
 * per SEP-2243). What `createFetchSender` and `createTaskDispatch` send through.
 */
export function createPoster(url: string | URL, options: FetchSenderOptions): { post: PostRequest; open: OpenRequest; clientInfo: { name: string; version: string } } {
  const doFetch = options.fetch ?? fetch;
  const maxResponseBytes = integerOption("maxResponseBytes", options.maxResponseBytes, 16 * 1024 * 1024);
  const timeoutMs = options.timeoutMs ?? 60_000;
  const clientInfo = options.clientInfo ?? { name: "mcp-yield-client", version: "0.1.0" };
  let nextId = 1;
  const send = async (method: string, params: Record<string, unknown>, signal: AbortSignal): Promise<{ id: number; response: Response }> => {
    const id = nextId++;
    const meta = {
      ...((params._meta as Record<string, unknown> | undefined) ?? {}),
      [PROTOCOL_VERSION_KEY]: PROTOCOL_VERSION,
      [CLIENT_INFO_KEY]: clientInfo,
      [CLIENT_CAPABILITIES_KEY]: options.capabilities,
    };
    const name = nameOf(method, params);
    let response: Response;
    try {
      response = await doFetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": PROTOCOL_VERSION,
          "mcp-method": method,
          ...(name !== undefined ? { "mcp-name": encodeHeaderValue(name) } : {}),
          ...options.headers,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id, method, params: { ...params, _meta: meta } }),
        signal,
      });
    } catch (error) {
      throw new ClientError("transport", `${method} failed: ${describeFailure(error)}`, undefined, { cause: error });
    }
    return { id, response };
  };
  const post: PostRequest = async (method, params, signal) => {
    const timeout = AbortSignal.timeout(timeoutMs);
    const { id, response } = await send(method, params, signal === undefined ? timeout : AbortSignal.any([signal, timeout]));
    return readResponse(response, id, maxResponseBytes);
  };
  const open: OpenRequest = async (method, params, signal) => {
    // Only the wait for the response's headers is timed: the stream then lasts as long as it must.
    const headers = new AbortController();
    const timer = setTimeout(() => headers.abort(new DOMException(`no response within ${timeoutMs} ms`, "TimeoutError")), timeoutMs);
    try {
      return await send(method, params, AbortSignal.any([signal, headers.signal]));
    } finally {
      clearTimeout(timer);
    }
  };
  return { post, open, clientInfo };
}

/** A response that is not a stream: the JSON-RPC response for `id` in it (an error, for a listen refused). */
export const readJsonResponse = (response: Response, id: number, maxBytes: number) => readResponse(response, id, maxBytes);

/**
 * A `Send` over plain `fetch` speaking stateless 2026-07-28 HTTP: every POST carries the
 * `_meta` envelope and the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers (the
 * name encoded per SEP-2243). The returned function also carries the declared `capabilities`,
 * so `callWithInput` answers only what was declared.
 */
export function createFetchSender(url: string | URL, options: FetchSenderOptions): Send {
  const { post, open } = createPoster(url, options);
  const send = async (method: string, params: Record<string, unknown>): Promise<unknown> => {
    const message = await post(method, params);
    if ("error" in message) throw new ClientError("rpc_error", `${method}: ${message.error.message} (${message.error.code})`, message.error);
    return message.result;
  };
  const maxFrameBytes = integerOption("maxResponseBytes", options.maxResponseBytes, 16 * 1024 * 1024);
  return Object.assign(send, { capabilities: options.capabilities, listener: { open, maxFrameBytes } });
}
