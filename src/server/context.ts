import type { McpServer, ServerContext } from "@modelcontextprotocol/server";
import { CLIENT_CAPABILITIES_KEY } from "../wire/index.js";
import type { RequestInfo } from "../runtime/options.js";

/**
 * How to name the caller a state is bound to; default: the OAuth client id, if any. A client id
 * names an application, not a user: servers whose users share a client should return a user id.
 */
export type PrincipalOf = (ctx: ServerContext) => string | undefined;

/** The default `PrincipalOf`: the OAuth client id of the request, if any. */
export const defaultPrincipal: PrincipalOf = (ctx) => ctx.http?.authInfo?.clientId;

/**
 * The runtime's view of one SDK request. Capabilities come from this request's envelope
 * (2026-07-28); a 2025-era connection has no envelope, so there the capabilities declared at
 * `initialize` are the request's own (that is what the SDK's legacy shim fulfils against).
 */
export function requestInfoOf(server: McpServer, ctx: ServerContext, principalOf: PrincipalOf, params?: Record<string, unknown>): RequestInfo {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const clientCapabilities =
    envelope !== undefined && Object.hasOwn(envelope, CLIENT_CAPABILITIES_KEY) ? envelope[CLIENT_CAPABILITIES_KEY] : envelope === undefined ? server.server.getClientCapabilities() : undefined;
  const principal = principalOf(ctx);
  const progress = progressOf(ctx, params);
  return { clientCapabilities, signal: ctx.mcpReq.signal, ...(principal !== undefined ? { principal } : {}), ...(progress ? { progress } : {}) };
}

/**
 * MCP progress for a request that asked for it (`_meta.progressToken`): each `progress(...)` of
 * the round becomes a `notifications/progress` on the request's stream — `progress` is `done`
 * when given, else a count that only goes up, as the protocol requires. Best effort: a client
 * gone or a transport that cannot carry it loses only the notification.
 */
function progressOf(ctx: ServerContext, params: Record<string, unknown> | undefined): RequestInfo["progress"] {
  const token = (params?._meta as { progressToken?: unknown } | undefined)?.progressToken;
  if (typeof token !== "string" && typeof token !== "number") return undefined;
  let sent = 0;
  return async (message, done, total) => {
    const progress = done !== undefined && done > sent ? done : sent + 1;
    sent = progress;
    await ctx.mcpReq.notify({ method: "notifications/progress", params: { progressToken: token, progress, ...(total !== undefined ? { total } : {}), message } }).catch(() => {});
  };
}

/**
 * The multi-round-trip members the SDK lifted out of the params, put back for the runtime.
 * The SDK's own copy of `inputResponses` may have had a `__proto__` entry turned into its
 * prototype; the runtime only ever reads own keys of it.
 */
export function multiRoundParams(ctx: ServerContext): { inputResponses?: Record<string, unknown>; requestState?: string } {
  const out: { inputResponses?: Record<string, unknown>; requestState?: string } = {};
  if (ctx.mcpReq.inputResponses !== undefined) out.inputResponses = ctx.mcpReq.inputResponses;
  const state: unknown = ctx.mcpReq.requestState();
  if (state !== undefined) out.requestState = state as string;
  return out;
}
