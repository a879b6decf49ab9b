import { readBoundedText } from "../util/bounded-body.js";
import { integerOption } from "../util/options.js";
import { ProtocolError } from "../wire/index.js";
import type { Runtime } from "../runtime/runtime.js";

/** Options of `createSignalHandler`. */
export interface SignalHandlerOptions {
  /** Largest body taken, in bytes (a larger one is refused with 413 unread). Default 65536. */
  maxBodyBytes?: number;
  /**
   * POSTs taken per URL (token) per minute on this handler; past it, 429 with `Retry-After`
   * until the minute is over. Default 30: a person clicking, or a sender retrying, stays far
   * below; whoever holds a URL cannot make the server check values for it without end.
   */
  perToken?: number;
  /** The clock the per-token minutes are counted on (ms). Default `Date.now`. */
  clock?: () => number;
}

/** How many URLs the per-token counts remember at once (the oldest minute is forgotten first). */
const MAX_COUNTED_TOKENS = 10_000;

/** Counts POSTs per token per minute: `take(token)` is the seconds to wait, or 0 when this one may go on. */
function perTokenLimit(limit: number, clock: () => number) {
  const counts = new Map<string, { since: number; n: number }>();
  return (token: string): number => {
    const now = clock();
    let count = counts.get(token);
    if (count === undefined || now - count.since >= 60_000) {
      counts.delete(token);
      if (counts.size >= MAX_COUNTED_TOKENS) counts.delete(counts.keys().next().value!);
      count = { since: now, n: 0 };
      counts.set(token, count);
    }
    if (count.n >= limit) return Math.max(1, Math.ceil((count.since + 60_000 - now) / 1000));
    count.n++;
    return 0;
  };
}

/** How each refusal reads over HTTP. */
const STATUS: Record<string, number> = {
  signal_invalid_token: 404, // forged, altered, another ring: nothing said about which
  signal_expired: 410,
  signal_used: 409,
  signal_not_waiting: 409,
  signal_invalid_value: 400,
  store_unavailable: 503,
  store_full: 503,
  store_misconfigured: 500,
  principal_byte_limit: 507,
};

const json = (status: number, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", "cache-control": "no-store", ...headers } });

/**
 * The webhook route for signals: `POST <signals.baseUrl><token>` with a JSON body delivers that
 * body to the task wait the token opens (`ctx.signalUrl(name)` made the URL). A fetch-API
 * handler (`(Request) => Promise<Response>`): mount it wherever `signals.baseUrl` points.
 *
 * 200 `{"status":"delivered"}` once the task, waiting there, took the value; 202
 * `{"status":"accepted"}` when the task has not reached that wait yet (the value is kept in the
 * task, single use, and checked by the wait's schema when it gets there); 400 a body that is not
 * JSON, that the journal could not keep (over 64 KiB, nested deeper than 32) or that the wait's
 * schema refuses (the task waits on, the token stays usable); 404 a token that is not one
 * (forged, altered, signed by another key ring); 409 `signal_used`: a value for that wait was
 * taken, or is kept, or its wait timed out; 409 `signal_not_waiting` (`Retry-After`): another
 * value for that wait is still being checked, or the task holds 64 KiB of early values; 410 a
 * task that ended (or expired) before it reached that wait; 413 a body past `maxBodyBytes`; 429
 * more than `perToken` POSTs to this URL within a minute (`Retry-After`); 405 anything but POST; 503 the
 * store is out (`Retry-After`).
 */
export function createSignalHandler(runtime: Pick<Runtime, "signal">, options: SignalHandlerOptions = {}): (request: Request) => Promise<Response> {
  const maxBodyBytes = integerOption("maxBodyBytes", options.maxBodyBytes, 64 * 1024);
  const limited = perTokenLimit(integerOption("perToken", options.perToken, 30, 1), options.clock ?? Date.now);
  return async (request) => {
    if (request.method !== "POST") return json(405, { error: "method_not_allowed", message: "POST a JSON body to this URL" }, { allow: "POST" });
    const path = new URL(request.url).pathname;
    const token = path.slice(path.lastIndexOf("/") + 1);
    const wait = limited(token);
    if (wait > 0) return json(429, { error: "too_many_requests", message: `Too many POSTs to this URL; send again in ${wait} s` }, { "retry-after": String(wait) });
    const text = await readBoundedText(request, maxBodyBytes);
    if (text === undefined) return json(413, { error: "too_large", message: `The body is over ${maxBodyBytes} bytes` });
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return json(400, { error: "invalid_json", message: "The body must be JSON" });
    }
    try {
      const delivered = await runtime.signal(token, value);
      return json(delivered.status === "accepted" ? 202 : 200, delivered);
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error;
      const reason = String(error.data?.reason ?? "");
      const status = STATUS[reason] ?? 500;
      return json(status, { error: reason || "error", message: error.message }, reason === "signal_not_waiting" || status === 503 ? { "retry-after": "1" } : {});
    }
  };
}
