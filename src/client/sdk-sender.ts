import { ClientError } from "./errors.js";
import type { Send } from "./types.js";

/**
 * What `sdkSender` needs of an `@modelcontextprotocol/client` v2 `Client`. Structural, so that
 * `mcp-yield/client` type-checks without the SDK installed.
 */
export interface SdkRequester {
  request(request: { method: "tools/call"; params?: Record<string, unknown> }, options: { allowInputRequired: true }): Promise<unknown>;
}

/**
 * A `Send` over a connected `@modelcontextprotocol/client` v2 `Client`, in the SDK's manual
 * multi-round-trip mode (`allowInputRequired`), so this loop — not the SDK's — answers the
 * embedded requests. Pin the client to 2026-07-28 (`versionNegotiation: { mode: { pin:
 * "2026-07-28" } }`) for MRTR; the SDK adds the envelope and headers.
 */
export function sdkSender(client: SdkRequester): Send {
  return async (method, params) => {
    try {
      return await client.request({ method: method as "tools/call", params }, { allowInputRequired: true });
    } catch (error) {
      const e = error as { code?: unknown; message?: string; data?: unknown };
      if (typeof e.code === "number") throw new ClientError("rpc_error", `${method}: ${e.message} (${e.code})`, { code: e.code, message: e.message ?? "", data: e.data });
      throw new ClientError("transport", `${method} failed: ${e.message ?? String(error)}`);
    }
  };
}
