import { z } from "zod";
import type { JournalRecord } from "../journal/journal.js";
import { ErrorCode, ProtocolError } from "../wire/index.js";
import type { TaskRecord } from "./record.js";

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

/** The key of one wait in `closed`. */
export const waitKey = (name: string, ordinal: number): string => `${name}#${ordinal}`;

/**
 * `r` with `journal`, and — when the journal now records the wait the task was on (one more
 * `W<name>` record than its ordinal) — that wait closed: its value and deadline dropped, its
 * key kept so its token is refused from now on.
 */
export function withJournal(r: TaskRecord, journal: JournalRecord[]): TaskRecord {
  if (r.awaits === undefined) return { ...r, journal };
  const fp = `W${r.awaits.name}`;
  let recorded = 0;
  for (const [f] of journal) if (f === fp) recorded++;
  if (recorded <= r.awaits.i) return { ...r, journal };
  const { awaits, arrived: _arrived, ...rest } = r;
  return { ...rest, journal, closed: [...(r.closed ?? []), waitKey(awaits.name, awaits.i)] };
}

/** What has come for the `ordinal`-th wait on `name`, as the record `r` (read when the run began) knows it. */
export function signalFor(r: TaskRecord, name: string, ordinal: number, now: number): { value: unknown } | { timeout: true } | undefined {
  if (r.arrived !== undefined && r.arrived.name === name && r.arrived.i === ordinal) return { value: r.arrived.value };
  if (r.awaits !== undefined && r.awaits.name === name && r.awaits.i === ordinal && r.awaits.deadline !== undefined && r.awaits.deadline <= now) return { timeout: true };
  return undefined;
}
