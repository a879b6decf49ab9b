import { z } from "zod";
import { isPlainJson } from "../state/value-text.js";
import { jsonBytesWithin } from "../util/json-limits.js";
import { ErrorCode, ProtocolError } from "../wire/index.js";
import { isTerminal, type TaskRecord } from "./record/record.js";
import { keepEarly, leaseEnded, type NewRun, signal, waitKey, waitsPassed } from "./record/transitions.js";

// Signals into tasks: the token that opens one wait (`ctx.signalToken`), and how a task record
// keeps a wait, the value that came for it, and which waits are over.
//
// A wait is named by the signal's name and its ordinal — the how-many-th wait on that name in
// the call — both fixed by the journal, so a replay makes the same token. A token is sealed
// with the state key ring (its own purpose): it names the task only to the server, and expires
// with the task.

/** What a signal token carries: task id, signal name, ordinal, expiry (store clock, ms). */
const claims = z.object({ t: z.string(), w: z.string(), i: z.number().int().nonnegative(), e: z.number() });
export type SignalClaims = z.infer<typeof claims>;

/** The purpose signal tokens are signed for (no other signed text can stand for one). */
export const SIGNAL_PURPOSE = "task-signal";

/** What seals and opens texts (the runtime's state codec). */
export interface TextSigner {
  sealText(purpose: string, text: string): string;
  openText(purpose: string, token: string): string | undefined;
  /** Tokens made before they were sealed were signed (their task id readable): still accepted while their task lives. */
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

/**
 * The token of one wait: sealed, so whoever holds a signal URL learns nothing from it — not the
 * task's id (which, on a server without principals, would let them read, answer or cancel the
 * task) — and can do nothing with it but send that wait its value.
 */
export function signalToken(signer: TextSigner, r: TaskRecord, name: string, ordinal: number): string {
  return signer.sealText(SIGNAL_PURPOSE, JSON.stringify({ t: r.id, w: name, i: ordinal, e: r.created + r.ttlMs } satisfies SignalClaims));
}

/** The claims of an authentic token, or a refusal that says nothing about why a forged one failed. */
export function readSignalToken(signer: TextSigner, token: unknown): SignalClaims {
  const text = typeof token === "string" ? (signer.openText(SIGNAL_PURPOSE, token) ?? signer.verifyText(SIGNAL_PURPOSE, token)) : undefined;
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
  const early = r.early?.find((e) => e.name === name && e.i === ordinal);
  if (early !== undefined) return { value: early.value };
  if (r.awaits !== undefined && r.awaits.name === name && r.awaits.i === ordinal && r.awaits.deadline !== undefined && r.awaits.deadline <= now) return { timeout: true };
  return undefined;
}

/** All values kept early in one task, at most (their JSON size, about). */
export const MAX_EARLY_SIGNAL_BYTES = 64 * 1024;

/**
 * What a delivery does with the task as the store holds it: refuse it, take the value for the
 * wait the task is on (`take`: the task runs on here), keep it for a wait not reached yet
 * (`keep`), or wait for the verdict on another value that is being checked for the same wait.
 */
type Decision = { refuse: SignalRefusal } | { take: TaskRecord } | { keep: TaskRecord } | { checking: true };

export function decideDelivery(r: TaskRecord, claims: SignalClaims, value: unknown, now: number, newRun: NewRun): Decision {
  const { w: name, i } = claims;
  // Passed — its value recorded, or its timeout — or a value for it kept already: the token is
  // used, whether or not the task has ended since (every value but the one taken hears so).
  const used = (r.closed ?? []).includes(waitKey(name, i)) || waitsPassed(r.journal, name) > i || r.early?.some((e) => e.name === name && e.i === i) === true;
  if (used) return { refuse: "signal_used" };
  if (isTerminal(r.status) || r.cancel === true) return { refuse: "signal_expired" };
  // A value came for the wait the task is on and is being checked by its schema now; if the
  // schema refuses it, the token opens the wait again.
  if (r.arrived?.name === name && r.arrived.i === i) return { checking: true };
  const onIt = r.awaits?.name === name && r.awaits.i === i;
  if (onIt && r.awaits!.deadline !== undefined && r.awaits!.deadline <= now) return { refuse: "signal_used" }; // timed out, the timeout being recorded
  // A wait in a race the task waits in: its timer, once ended, has won (its end being recorded).
  const inRace = r.race?.w.some((w) => w.name === name && w.i === i) === true;
  if (inRace && r.race!.until !== undefined && r.race!.until <= now) return { refuse: "signal_used" };
  // A run is deciding the race (another value came for it, an answer, its timer): this value
  // waits for the verdict — the race ended (its waits used up), or it waits again (try this one).
  if (inRace && r.lease !== undefined) return { checking: true };
  if ((onIt || inRace) && r.lease === undefined) return { take: signal(r, name, i, value, newRun) };
  let kept = jsonBytesWithin(value, MAX_SIGNAL_VALUE_BYTES, MAX_SIGNAL_VALUE_DEPTH) as number;
  for (const e of r.early ?? []) kept += jsonBytesWithin(e.value, MAX_EARLY_SIGNAL_BYTES, Number.POSITIVE_INFINITY) as number;
  if (kept > MAX_EARLY_SIGNAL_BYTES) return { refuse: "signal_not_waiting" };
  return { keep: keepEarly(r, name, i, value) };
}

/** What became of a value a run saw: taken, refused by the wait's schema (why), or `lost` — its race was won by another branch. */
type Verdict = { ok: true } | { ok: false; message: string; lost?: boolean };

/** What delivering a signal needs from the engine. */
export interface SignalDeliveryParts {
  signer: TextSigner;
  time: { sync(): Promise<void>; now(): number; uncertainty(): number };
  update: (id: string, change: (r: TaskRecord) => TaskRecord | false, charged?: boolean) => Promise<{ record: TaskRecord | undefined; written: boolean }>;
  /** A fresh lease for a new run on this instance, and the record's run count advanced. */
  newRun: NewRun;
  /** Run the task (now holding that lease) on this instance. */
  run: (r: TaskRecord) => Promise<void>;
  /** Take a task over whose run's lease lapsed (the run that was to check a value died). */
  takeOver: (id: string) => Promise<void>;
  /** How long a delivery waits for the verdict on another value for the same wait. Default 5 s. */
  checkingMs?: number;
}

/** What a delivery answers: the task took the value (`delivered`), or keeps it for a wait it has not reached (`accepted`). */
export type SignalDelivered = { status: "delivered" } | { status: "accepted" };

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Delivering signals: the value put in the task with a compare-and-swap (so two deliveries of one
 * token cannot both land), the task run on here, and the sender answered once the run's wait took
 * the value or its schema refused it (`heard`). A value for a wait the task has not reached is
 * kept in the task (202) and checked when the wait is reached. A delivery that finds another
 * value for the same wait being checked waits for that verdict: taken, it is told the token was
 * used; refused, it tries its own value.
 */
export function createSignalDelivery({ signer, time, update, newRun, run, takeOver, checkingMs = 5_000 }: SignalDeliveryParts) {
  /** Deliveries waiting for their verdict: by task, signal name and ordinal. */
  const pending = new Map<string, (verdict: Verdict) => void>();
  const keyFor = (taskId: string, name: string, ordinal: number) => waitKey(`${taskId}#${name}`, ordinal);
  return {
    /** A run's wait on this instance took a value, or refused it. */
    heard(taskId: string, name: string, ordinal: number, verdict: Verdict): void {
      pending.get(keyFor(taskId, name, ordinal))?.(verdict);
    },

    async deliver(token: unknown, value: unknown): Promise<SignalDelivered> {
      const claims = readSignalToken(signer, token);
      checkSignalValue(value);
      await time.sync();
      if (claims.e <= time.now()) throw refuse("signal_expired", "This signal token has expired (with its task)");
      let decision: Decision = { checking: true };
      let taken: Awaited<ReturnType<typeof update>>;
      for (let waited = 0, pause = 10; ; waited += pause, pause = Math.min(pause * 2, 200)) {
        // Arrivals are not charged to anyone's share: a value a schema refuses costs its task's
        // owner nothing; the one the task takes is charged when its journal records it.
        taken = await update(claims.t, (r) => {
          decision = decideDelivery(r, claims, value, time.now(), newRun);
          return "take" in decision ? decision.take : "keep" in decision ? decision.keep : false;
        });
        if (!("checking" in decision) || taken.record === undefined || waited >= checkingMs) break;
        // The run that was to check the other value died (its write landed, its instance did
        // not go on): take the task over, so the verdict comes now rather than at a sweep.
        const lease = taken.record.lease;
        if (lease !== undefined && leaseEnded(lease, time.now(), time.uncertainty())) await takeOver(claims.t);
        await wait(pause);
      }
      if (taken.record === undefined) throw refuse("signal_expired", "This signal's task no longer exists");
      const d = decision as Decision;
      if ("refuse" in d) {
        if (d.refuse === "signal_used") throw refuse(d.refuse, "This signal token was already used (or its wait timed out)");
        if (d.refuse === "signal_expired") throw refuse(d.refuse, "This signal's task ended before it reached this wait");
        throw refuse(d.refuse, `The task keeps ${MAX_EARLY_SIGNAL_BYTES} bytes of values for waits it has not reached, and has no room for this one; send it again once it is waiting`);
      }
      if ("checking" in d) throw refuse("signal_not_waiting", "Another value for this wait is being checked; send this one again shortly");
      if ("keep" in d) return { status: "accepted" };
      // Run the task on here, and answer once it has taken the value (or refused it).
      const key = keyFor(claims.t, claims.w, claims.i);
      const verdict = new Promise<Verdict>((resolve) => pending.set(key, resolve));
      // A run that ends without reaching the wait (it failed, or another instance took the task)
      // still answers the sender: the value is in the task, and a takeover will use it.
      void run(taken.record).finally(() => pending.get(key)?.({ ok: true }));
      const result = await verdict.finally(() => pending.delete(key));
      if (!result.ok && result.lost === true) throw refuse("signal_used", "This signal's wait was in a race that another branch won");
      if (!result.ok) throw refuse("signal_invalid_value", `The task refused this value: ${result.message}`);
      return { status: "delivered" };
    },
  };
}
