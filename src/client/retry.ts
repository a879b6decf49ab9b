import { ClientError } from "./errors.js";
import type { Send } from "./types.js";

// client/retry.ts owns sending one request again when a repeat gets past its failure.

/** Reasons a server gives for a failure the very same request gets past (single use keeps the rest). */
const RETRYABLE = new Set(["round_in_progress", "idempotency_in_progress", "store_unavailable", "request_aborted", "code_unknown"]);

/** Whether the server refused with a reason that the very same request gets past (its store was unavailable, say). */
export function retryableRefusal(error: ClientError): boolean {
  const reason = (error.rpc?.data as { reason?: unknown } | undefined)?.reason;
  return error.reason === "rpc_error" && typeof reason === "string" && RETRYABLE.has(reason);
}

/** How long to wait before a repeat: what the server asked for (bounded), else a short backoff. */
function delayOf(error: ClientError, attempt: number): number {
  const asked = (error.rpc?.data as { retryAfterMs?: unknown } | undefined)?.retryAfterMs;
  if (typeof asked === "number" && Number.isFinite(asked) && asked >= 0) return Math.min(asked, 10_000);
  return 200 * 2 ** attempt;
}

/**
 * `send(method, params)`, sent again unchanged up to `retries` times when it failed in a way a
 * repeat gets past: a retryable server reason, or (`keyed`: a first request carrying its
 * idempotency key, which the server answers once) a failed connection. A round with a state
 * is repeated only when the server said so: on a server without a store a repeat would run it again.
 */
export async function sendRetrying(send: Send, method: string, params: Record<string, unknown>, o: { retries: number; keyed: boolean; signal: AbortSignal | undefined }): Promise<unknown> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await send(method, params);
    } catch (error) {
      if (!(error instanceof ClientError) || attempt >= o.retries || o.signal?.aborted) throw error;
      const again = error.reason === "rpc_error" ? retryableRefusal(error) : error.reason === "transport" && o.keyed;
      if (!again) throw error;
      await new Promise((resolve) => setTimeout(resolve, delayOf(error, attempt)));
    }
  }
}
