import { z } from "zod";
import { digestOf, type StateCodec } from "../state/index.js";
import { type JournalRecord, parseHeader, parseLines } from "./journal.js";
import { isSpillRef } from "./spill-ref.js";

/**
 * A saved journal: what a real call did, kept as a file so later code can be replayed against
 * it before it is deployed (`npx mcp-yield export` writes one, `replayFixtures` in
 * `mcp-yield/testing` replays a folder of them). It holds what the replay needs — the tool, the
 * input, the records, where the call stood — and no secret: no key, no principal, no token.
 */
export const journalFixture = z.object({
  format: z.literal("mcp-yield/journal-fixture"),
  v: z.literal(1),
  /** The tool's name. */
  tool: z.string().min(1),
  /** The definition's `version` the journal was recorded under. */
  version: z.string().optional(),
  /** Where it came from: a requestState or a task record. */
  source: z.enum(["requestState", "task"]),
  exportedAt: z.string(),
  /** The call id (what `ctx.idempotencyKey` derives from). */
  callId: z.string(),
  /** SHA-256 of the canonical arguments (what a requestState is bound to), where they are known. */
  argumentsDigest: z.string().optional(),
  /** The arguments as sent, or… */
  arguments: z.record(z.string(), z.unknown()).optional(),
  /** …the input as the tool's schema parsed it, as a value text (a task keeps this). */
  input: z.string().optional(),
  /** The journal: [fingerprint, value text] per effect. */
  records: z.array(z.tuple([z.string(), z.string()])),
  /**
   * Where the call stood after the records: waiting for these asks (key → fingerprint), done, or
   * still going (a task running, asleep, waiting for a signal, or ended by failure or cancel).
   */
  end: z.discriminatedUnion("at", [
    z.object({ at: z.literal("ask"), outstanding: z.record(z.string(), z.string()), partial: z.record(z.string(), z.string()).optional() }),
    z.object({ at: z.literal("complete") }),
    z.object({ at: z.literal("running") }),
  ]),
});
/**
 * A saved journal (see `journalFixture`'s fields): written by `npx mcp-yield export`,
 * `createTaskAdmin().exportFixture` or `fixtureFromState`, read by `replayFixtures`.
 */
export interface JournalFixture {
  format: "mcp-yield/journal-fixture";
  v: 1;
  /** The tool's name. */
  tool: string;
  /** The definition's `version` the journal was recorded under. */
  version?: string | undefined;
  /** Where it came from: a requestState or a task record. */
  source: "requestState" | "task";
  exportedAt: string;
  /** The call id (what `ctx.idempotencyKey` derives from). */
  callId: string;
  /** SHA-256 of the canonical arguments, where they are known. */
  argumentsDigest?: string | undefined;
  /** The arguments as sent, or… */
  arguments?: Record<string, unknown> | undefined;
  /** …the input as the tool's schema parsed it, as a value text (a task keeps this). */
  input?: string | undefined;
  /** The journal: [fingerprint, value text] per effect. */
  records: Array<[string, string]>;
  /** Where the call stood after the records: waiting for asks (key → fingerprint), done, or still going. */
  end: { at: "ask"; outstanding: Record<string, string>; partial?: Record<string, string> | undefined } | { at: "complete" } | { at: "running" };
}
// The schema and the interface describe one format: each must accept what the other says.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export const FIXTURE_SCHEMA_MATCHES: Same<z.infer<typeof journalFixture>, JournalFixture> = true;

/** The records of a fixture, typed as the journal's. */
export const fixtureRecords = (f: JournalFixture): JournalRecord[] => f.records as JournalRecord[];

/**
 * A fixture from a `requestState` (verified with `codec`; expiry does not matter). The token
 * carries only the digest of the call's arguments: give `args` (checked against it) for a tool
 * with input; without them the fixture replays with `{}`.
 */
export function fixtureFromState(codec: StateCodec, token: string, args?: Record<string, unknown>, now: () => number = Date.now): JournalFixture {
  const state = codec.inspect(token);
  if (state.method !== "tools/call") throw new TypeError(`this requestState belongs to ${state.method} ${JSON.stringify(state.target)}: fixtures are made of tool calls`);
  if (isSpillRef(state.data))
    throw new TypeError("this requestState's journal was spilled to the server's store (it was too large for the token): export the call as a task, or raise limits.maxStateBytes");
  const header = parseHeader(state.data);
  const records = parseLines(state.body ?? "");
  if (header === undefined || records === undefined) throw new TypeError("this requestState is authentic but holds no journal of this library");
  const given = args ?? {};
  if (digestOf(given) !== state.argumentsDigest) {
    throw new TypeError(
      args === undefined
        ? "this call had arguments: give them (--arguments '<json>'); the token carries only their digest"
        : "the arguments given are not the ones this call was made with (their digest differs from the token's)",
    );
  }
  return {
    format: "mcp-yield/journal-fixture",
    v: 1,
    tool: state.target,
    ...(header.v !== undefined ? { version: header.v } : {}),
    source: "requestState",
    exportedAt: new Date(now()).toISOString(),
    callId: header.c,
    argumentsDigest: state.argumentsDigest,
    arguments: given,
    records,
    end: { at: "ask", outstanding: header.o, ...(header.p !== undefined ? { partial: header.p } : {}) },
  };
}
