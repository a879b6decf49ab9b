import { canonicalEntries, digestOfText } from "../../state/canonical.js";
import { randomUuid, type StateBinding } from "../../state/index.js";
import { newTaskId } from "../../tasks/record/record.js";
import { ErrorCode, ProtocolError } from "../../wire/index.js";
import { invalidParams, storeSafe } from "../admission.js";
import type { Continuation, Redemption } from "./redeem.js";
import type { Guard } from "./single-use.js";

// runtime/single-use/idempotency.ts owns the idempotent first request: a request that starts a call and
// carries an idempotency key (`params._meta.idempotencyKey`, or one the tool derives) is redeemed
// once under (principal, method, target, key), exactly as a presented state is (single-use.ts):
// the same request again — a lost reply, a client's timeout, on any instance — gets the first
// one's response (its `requestState`, or its task), or waits for it while it runs; the same key
// with other arguments is refused.
//
// Invariants:
// 1. A key's record binds the arguments (and any answers) of the request that first used it:
//    the same key with others is `idempotency_conflict`, never a second call.
// 2. The record is kept at least as long as what it answered lives: the state it minted, or the
//    task it created (`keepMs` from each write, plus the skew margin).
// 3. Without a key nothing changes: no record, no store round trip.

/** The `_meta` member a client puts its idempotency key in. */
export const IDEMPOTENCY_KEY_META = "idempotencyKey";
/** The longest idempotency key accepted (characters). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

const badKey = (what: string) => invalidParams(`${what} must be a string of 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`, "invalid_idempotency_key");

/** The client's key from a request's `_meta`, checked (`-32602` `invalid_idempotency_key` if malformed); undefined when absent. */
export function clientIdempotencyKey(meta: Record<string, unknown> | undefined): string | undefined {
  if (meta === undefined || !Object.hasOwn(meta, IDEMPOTENCY_KEY_META)) return undefined;
  const key = meta[IDEMPOTENCY_KEY_META];
  if (typeof key !== "string" || key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) throw badKey("params._meta.idempotencyKey");
  return key;
}

/** A key a tool's `idempotencyKey(args, ctx)` derived, checked: a bad one is the author's mistake (`-32603`). */
export function derivedIdempotencyKey(derive: () => unknown, tool: string): string | undefined {
  let key: unknown;
  try {
    key = derive();
  } catch (error) {
    throw new ProtocolError(ErrorCode.InternalError, `Tool "${tool}": idempotencyKey() threw: ${error instanceof Error ? error.message : String(error)}`, { reason: "invalid_idempotency_key" });
  }
  if (key === undefined) return undefined;
  if (typeof key !== "string" || key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH)
    throw new ProtocolError(ErrorCode.InternalError, `Tool "${tool}": idempotencyKey() must return undefined or a string of 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`, {
      reason: "invalid_idempotency_key",
    });
  return key;
}

/**
 * The guard of a first request under `key`: its record's name (scoped to the principal and the
 * definition; the key itself is hashed, so no client text becomes a store key), the digest of
 * its arguments and answers, and how long its record is kept from each write.
 */
export function idempotencyGuard(binding: StateBinding, key: string, responses: Map<string, unknown>, clock: () => number, keepMs: number): Guard {
  return {
    nonce: `i.${digestOfText(JSON.stringify([binding.principal ?? null, binding.method, binding.target, key]))}`,
    digest: digestOfText(`${binding.argumentsDigest}\n${canonicalEntries(responses)}`),
    expiresAt: () => clock() + keepMs,
  };
}

/** How long a client is told to wait before repeating a request whose first is still running. */
const RETRY_AFTER_MS = 1000;

/** The redemption's refusals in an idempotency key's words; anything else as it is. */
export function inKeyTerms(error: unknown): unknown {
  if (!(error instanceof ProtocolError)) return error;
  const reason = error.data?.reason;
  if (reason === "state_redeemed")
    return new ProtocolError(ErrorCode.InvalidParams, "This idempotency key was used by a request with other arguments; use a new key for a new call", { reason: "idempotency_conflict" });
  if (reason === "round_in_progress")
    return new ProtocolError(ErrorCode.InternalError, "The first request with this idempotency key is still running; send the same request again later", {
      reason: "idempotency_in_progress",
      retryAfterMs: RETRY_AFTER_MS,
    });
  return error;
}

/** `work()`, its refusals in key terms (`inKeyTerms`). */
export async function keyed<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw inKeyTerms(error);
  }
}

/**
 * A task created at a first request under an idempotency key: created once, its id chosen
 * before anything is written and kept in the key's record, so a repeat — after a lost reply,
 * or after the instance creating it died — answers with the same task, never a second.
 */
export async function startTaskOnce<T>(redemption: Redemption, guard: Guard, start: (ids: { callId: string; taskId: string }) => Promise<T>, report: (error: unknown) => void): Promise<T> {
  return keyed(async () => {
    const mine: Continuation = { h: { r: 0, c: randomUuid(), o: {} }, t: "", n: 0, task: newTaskId() };
    const ticket = await storeSafe(() => redemption.claim(guard.nonce, guard.digest, guard.expiresAt, mine));
    if (ticket.kind === "stored") {
      const { response } = ticket;
      if ("error" in response) throw new ProtocolError(response.error.code, response.error.message, response.error.data);
      return response.result as T;
    }
    // Taken over from an attempt that stopped (or died): its call and its task.
    const k = ticket.continuation?.task !== undefined ? ticket.continuation : mine;
    let result: T;
    try {
      result = await start({ callId: k.h.c, taskId: k.task! });
    } catch (error) {
      await ticket.suspend(k).catch(report);
      throw error;
    }
    await ticket.finish({ result }).catch(report);
    return result;
  });
}
