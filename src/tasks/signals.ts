import { z } from "zod";
import { isPlainJson } from "../state/value-text.js";
import { jsonBytesWithin } from "../util/json-limits.js";
import { ErrorCode, ProtocolError } from "../wire/index.js";
import type { TaskRecord } from "./record/record.js";
import { type NewRun, signal, waitKey } from "./record/transitions.js";

// Signals into tasks: the token that opens one wait (`ctx.signalToken`), and how a task record
// keeps a wait, the value that came for it, and which waits are over.
//
// A wait is named by the signal's name and its ordinal — the how-many-th wait on that name in
// the call — both fixed by the journal, so a replay makes the same token. A token is signed
// with the state key ring (its own purpose), names the task, and expires with the task.

/** What a signal token carries: task id, signal name, ordinal, expiry (store clock, ms). */
const claims = z.object({ t: z.string(), w: z.string(), i: z.number().int().nonnegative(), e: z.number() });
export type SignalClaims = z.infer<typeof claims>;

/** The purpose signal tokens are signed for (no other signed text can stand for one). */
export const SIGNAL_PURPOSE = "task-signal";

/** What signs and checks texts (the runtime's state codec). */
export interface TextSigner {
  signText(purpose: string, text: string): string;
  verifyText(purpose: string, token: string): string | undefined;
}

/** Why a signal was refused. Stable strings: `data.reason` on the wire. */
export type SignalRefusal = "signal_invalid_token" | "signal_expired" | "signal_used" | "signal_not_waiting" | "signal_invalid_value";

export const refuse = (reason: SignalRefusal, message: string): ProtocolError => new ProtocolError(ErrorCode.InvalidParams, message, { reason });

/** The largest signal value kept (its JSON size, about), and how deep it may nest. */
export const MAX_SIGNAL_VALUE_BYTES = 64 * 1024;
export const MAX_SIGNAL_VALUE_DEPTH = 32;

/**
 * Refuse, before anything is written, a value the task's journal could not keep: larger than
 * 64 KiB, nested deeper than 32, or not plain JSON (a Date, a Map, a class instance, NaN,
 * -0 — what a caller of `runtime.signal` might pass; an HTTP body is JSON already). The walk is
 * iterative and stops at the first limit passed, so a hostile body costs no more than the limits.
 */
export function checkSignalValue(value: unknown): void {
  const measured = jsonBytesWithin(value, MAX_SIGNAL_VALUE_BYTES, MAX_SIGNAL_VALUE_DEPTH);
  if (measured === "size") throw refuse("signal_invalid_value", `A signal's value is at most ${MAX_SIGNAL_VALUE_BYTES} bytes as JSON`);
  if (measured === "depth") throw refuse("signal_invalid_value", `A signal's value nests at most ${MAX_SIGNAL_VALUE_DEPTH} levels deep`);
  if (!isPlainJson(value)) throw refuse("signal_invalid_value", "A signal's value must be plain JSON (objects, arrays, strings, finite numbers, booleans, null)");
}

export function signalToken(signer: TextSigner, r: TaskRecord, name: string, ordinal: number): string {
  return signer.signText(SIGNAL_PURPOSE, JSON.stringify({ t: r.id, w: name, i: ordinal, e: r.created + r.ttlMs } satisfies SignalClaims));
}

/** The claims of an authentic token, or a refusal that says nothing about why a forged one failed. */
export function readSignalToken(signer: TextSigner, token: unknown): SignalClaims {
  const text = typeof token === "string" ? signer.verifyText(SIGNAL_PURPOSE, token) : undefined;
  let parsed: unknown;
  try {
    parsed = text === undefined ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const read = claims.safeParse(parsed);
  if (!read.success) throw refuse("signal_invalid_token", "This signal token is not valid");
  return read.data;
}

/** What has come for the `ordinal`-th wait on `name`, as the record `r` (read when the run began) knows it. */
export function signalFor(r: TaskRecord, name: string, ordinal: number, now: number): { value: unknown } | { timeout: true } | undefined {
  if (r.arrived !== undefined && r.arrived.name === name && r.arrived.i === ordinal) return { value: r.arrived.value };
  if (r.awaits !== undefined && r.awaits.name === name && r.awaits.i === ordinal && r.awaits.deadline !== undefined && r.awaits.deadline <= now) return { timeout: true };
  return undefined;
}

type Verdict = { ok: true } | { ok: false; message: string };

/** What delivering a signal needs from the engine. */
export interface SignalDeliveryParts {
  signer: TextSigner;
  time: { sync(): Promise<void>; now(): number };
  update: (id: string, change: (r: TaskRecord) => TaskRecord | false, charged?: boolean) => Promise<{ record: TaskRecord | undefined; written: boolean }>;
  /** A fresh lease for a new run on this instance, and the record's run count advanced. */
  newRun: NewRun;
  /** Run the task (now holding that lease) on this instance. */
  run: (r: TaskRecord) => Promise<void>;
}

/**
 * Delivering signals: the value put in the task with a compare-and-swap (so two deliveries of one
 * token cannot both land), the task run on here, and the sender answered once the run's wait took
 * the value or its schema refused it (`heard`).
 */
export function createSignalDelivery({ signer, time, update, newRun, run }: SignalDeliveryParts) {
  /** Deliveries waiting for their verdict: by task, signal name and ordinal. */
  const pending = new Map<string, (verdict: Verdict) => void>();
  const keyFor = (taskId: string, name: string, ordinal: number) => waitKey(`${taskId}#${name}`, ordinal);
  return {
    /** A run's wait on this instance took a value, or refused it. */
    heard(taskId: string, name: string, ordinal: number, verdict: Verdict): void {
      pending.get(keyFor(taskId, name, ordinal))?.(verdict);
    },

    async deliver(token: unknown, value: unknown): Promise<{ status: "delivered" }> {
      const claims = readSignalToken(signer, token);
      checkSignalValue(value);
      await time.sync();
      if (claims.e <= time.now()) throw refuse("signal_expired", "This signal token has expired (with its task)");
      let why: SignalRefusal | undefined;
      const taken = await update(
        claims.t,
        (r) => {
          const ended = r.status === "completed" || r.status === "failed" || r.status === "cancelled" || r.cancel === true;
          // Already here (`arrived`: an earlier delivery of this token landed — its sender may have
          // been told the store failed, its write's answer lost) is used, not "send it again".
          const delivered = (r.closed ?? []).includes(waitKey(claims.w, claims.i)) || (r.arrived?.name === claims.w && r.arrived.i === claims.i);
          why = ended ? "signal_expired" : delivered ? "signal_used" : r.awaits?.name !== claims.w || r.awaits.i !== claims.i || r.lease !== undefined ? "signal_not_waiting" : undefined;
          if (why !== undefined) return false;
          return signal(r, claims.w, claims.i, value, newRun);
        },
        true,
      );
      if (taken.record === undefined) throw refuse("signal_expired", "This signal's task no longer exists");
      if (!taken.written) {
        if (why === "signal_used") throw refuse(why, "This signal token was already used (or its wait timed out)");
        if (why === "signal_expired") throw refuse(why, "This signal's task has ended");
        throw refuse("signal_not_waiting", "The task is not waiting for this signal yet; send it again shortly");
      }
      // Run the task on here, and answer once it has taken the value (or refused it).
      const key = keyFor(claims.t, claims.w, claims.i);
      const verdict = new Promise<Verdict>((resolve) => pending.set(key, resolve));
      // A run that ends without reaching the wait (it failed, or another instance took the task)
      // still answers the sender: the value is in the task, and a takeover will use it.
      void run(taken.record).finally(() => pending.get(key)?.({ ok: true }));
      const result = await verdict.finally(() => pending.delete(key));
      if (!result.ok) throw refuse("signal_invalid_value", `The task refused this value: ${result.message}`);
      return { status: "delivered" };
    },
  };
}
