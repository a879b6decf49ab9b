import { z } from "zod";
import { encodeBase64url, encodeValue, randomBytes, UnsupportedValueError } from "../../state/index.js";
import { type CallToolResult, type CreateTaskResult, type GetTaskResult, type InputRequest, TERMINAL_STATUSES, type TaskStatus } from "../../wire/index.js";

/**
 * A task as the store keeps it: everything any instance needs to answer `tasks/*` and to run
 * the call — the definition's name and version, its arguments, the journal, the asks
 * outstanding and the answers collected so far, who holds the lease, and the outcome. Parsed
 * with zod whenever it is read back (the store is a boundary like the wire).
 */
export const taskRecord = z.object({
  /** Record format. */
  v: z.literal(1),
  id: z.string(),
  /** Revision: +1 on every write (the compare-and-swap is on the whole text). */
  rev: z.number().int().nonnegative(),
  tool: z.string(),
  version: z.string().optional(),
  /** The arguments as sent: kept only when the parsed input could not be (`input` absent). */
  args: z.record(z.string(), z.unknown()),
  /**
   * The input as the tool's schema parsed it, as a value text: what the first run's generator
   * got, exactly, without the members the schema strips (a client cannot park junk here).
   */
  input: z.string().optional(),
  /** The principal the task belongs to (another one's `tasks/*` finds no such task). */
  principal: z.string().optional(),
  /** The call id: the root of `ctx.idempotencyKey`, the same before and after the task started. */
  call: z.string(),
  /** The client capabilities declared by the request that started the task (they gate its asks). */
  caps: z.unknown(),
  status: z.enum(["working", "input_required", "completed", "failed", "cancelled"]),
  message: z.string().optional(),
  created: z.number(),
  updated: z.number(),
  ttlMs: z.number().int().positive(),
  pollMs: z.number().int().positive(),
  journal: z.array(z.tuple([z.string(), z.string()])),
  /** When each journal record was written (store clock): a timeline's times. Absent in records from before. */
  times: z.array(z.number()).optional(),
  /** Every ask outstanding at the park (runtime key → fingerprint), answered ones of an `all` included. */
  outstanding: z.record(z.string(), z.string()),
  /** The asks the task is parked on: wire key (unique for the task's life) → runtime key, fingerprint, request. */
  waiting: z.array(z.object({ wire: z.string(), key: z.string(), fp: z.string(), request: z.unknown() })),
  /** Answers received for `waiting` asks so far, by runtime key (validated when the task uses them). */
  answers: z.record(z.string(), z.unknown()),
  /** Valid answers kept for a partly answered `all(...)` (value texts). */
  partial: z.record(z.string(), z.string()),
  /** Every wire key ever issued. */
  used: z.array(z.string()),
  /** Who runs the task: the instance, the one run of it there (a fence: a stale run on the same instance is not the owner), until when. */
  lease: z.object({ owner: z.string(), run: z.string().optional(), until: z.number() }).optional(),
  /** Runs started so far (each lease taken for a new run counts one): what traces number a run by. Absent in records from before. */
  runs: z.number().int().nonnegative().optional(),
  /** A sleeping task (`sleep()`): working, held by nobody, due to go on at this time (the store's clock). */
  wake: z.number().optional(),
  /** The wait for a signal the task is on: its name, ordinal, and when it times out (store clock). */
  awaits: z.object({ name: z.string(), i: z.number().int().nonnegative(), deadline: z.number().optional() }).optional(),
  /** The value that came for that wait, until the journal records it (a takeover replays it). */
  arrived: z.object({ name: z.string(), i: z.number().int().nonnegative(), value: z.unknown() }).optional(),
  /**
   * Values that came for waits the task has not reached yet, one per wait, kept until the
   * journal records the wait (then its token is used up) or the wait's schema refuses the value
   * (then it is dropped and the token opens the wait again).
   */
  early: z.array(z.object({ name: z.string(), i: z.number().int().nonnegative(), value: z.unknown() })).optional(),
  /**
   * A `race(...)` the task waits in (asking, or working and held by nobody): where its end will
   * be recorded (the journal's length), the signal waits it has, and when its first timer ends
   * (store clock). Any one answer, any one of these signals, or that time lets the task go on.
   */
  race: z.object({ at: z.number().int().nonnegative(), w: z.array(z.object({ name: z.string(), i: z.number().int().nonnegative() })), until: z.number().optional() }).optional(),
  /** The last signal value a wait's schema refused: which wait, why, when (store clock). */
  refusedSignal: z.object({ wait: z.string(), reason: z.string(), at: z.number() }).optional(),
  /** Waits that are over (`name#ordinal`): their tokens are refused. */
  closed: z.array(z.string()).optional(),
  /**
   * A task held for an operator (its step ran out of attempts, or its replay diverged): working,
   * held by nobody, never due, until `tasks retry` or `tasks fail` (or a cancel, or its lifetime).
   * `step`: the step whose attempts a retry starts over.
   */
  /** When an operator last retried the task after a hold (a timeline starts the retried step there). */
  retried: z.number().optional(),
  held: z.object({ kind: z.enum(["step_failed", "journal_divergence"]), reason: z.string(), at: z.number(), step: z.string().optional() }).optional(),
  /** A task ended by its lifetime: its record is kept until then (store clock) so its outcome can be read. */
  keptUntil: z.number().optional(),
  cancel: z.literal(true).optional(),
  /** Marks the generator parked live on the instance that parked it (a resume instead of a replay). */
  park: z.string().optional(),
  result: z.record(z.string(), z.unknown()).optional(),
  error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }).optional(),
});
export type TaskRecord = z.infer<typeof taskRecord>;

export const isTerminal = (status: TaskStatus): boolean => TERMINAL_STATUSES.includes(status);

const iso = (ms: number) => new Date(ms).toISOString();

function envelope(r: TaskRecord) {
  return {
    taskId: r.id,
    status: r.status,
    ...(r.message !== undefined ? { statusMessage: r.message } : {}),
    createdAt: iso(r.created),
    lastUpdatedAt: iso(r.updated),
    ttlMs: r.ttlMs,
    pollIntervalMs: r.pollMs,
  };
}

/** The `CreateTaskResult` `tools/call` answers once the record exists. */
export function createResultOf(r: TaskRecord): CreateTaskResult {
  return { resultType: "task", ...envelope(r) };
}

/** The asks the task waits on that have no answer yet. */
export const openWaits = (r: TaskRecord): TaskRecord["waiting"] => r.waiting.filter((w) => !Object.hasOwn(r.answers, w.key));

/** The asks still unanswered, as `inputRequests`. */
export function openAsks(r: TaskRecord): Record<string, InputRequest> {
  return Object.fromEntries(openWaits(r).map((w) => [w.wire, w.request as InputRequest]));
}

/** What `tasks/get` answers: the task with the fields of its status. */
export function detailedTaskOf(r: TaskRecord): GetTaskResult {
  const base = { resultType: "complete" as const, ...envelope(r) };
  switch (r.status) {
    case "input_required":
      return { ...base, status: r.status, inputRequests: openAsks(r) } as GetTaskResult;
    case "completed":
      // The inlined result carries resultType: the official requester validates it as a
      // 2026-07-28 CallToolResult (and would treat a tool error as a failed outcome without it).
      return { ...base, status: r.status, result: { ...(r.result as CallToolResult), resultType: "complete" } } as GetTaskResult;
    case "failed":
      return { ...base, status: r.status, error: r.error ?? { code: -32603, message: "The task failed" } } as GetTaskResult;
    default:
      return { ...base, status: r.status } as GetTaskResult;
  }
}

/**
 * A wire key for the runtime key `key` that no ask of this task ever used: the key itself the
 * first time, then `key~2`, `key~3`, ... (an ask asked again after an invalid answer, or a
 * loop asking under one explicit key). Keys stay unique for the task's whole life.
 */
export function wireKeyFor(key: string, used: ReadonlySet<string>): string {
  if (!used.has(key)) return key;
  for (let n = 2; ; n++) if (!used.has(`${key}~${n}`)) return `${key}~${n}`;
}

/**
 * A new task id: 128 random bits, base64url — drawn again when it would start with "-" (one in
 * 64), which a command line reads as an option: `mcp-yield tasks show -Xy…` failed with "Unknown
 * option" (found as a test that failed once in a run of the suite).
 */
export function newTaskId(): string {
  for (;;) {
    const id = encodeBase64url(randomBytes(16));
    if (id[0] !== "-") return id;
  }
}

/** What a task record keeps of its input: the parsed input as a value text, or (if none can carry it) the arguments as sent. */
export function storedInput(task: { args: Record<string, unknown>; input?: unknown }): { args: Record<string, unknown>; input?: string } {
  if (!("input" in task)) return { args: task.args };
  try {
    return { args: {}, input: encodeValue(task.input) };
  } catch (error) {
    if (error instanceof UnsupportedValueError) return { args: task.args };
    throw error;
  }
}

/**
 * Whether a lease has certainly ended, as an instance whose clock reads `now` give or take
 * `uncertainty` (StoreClock.uncertainty) sees it: the holder may see the store's clock that much
 * behind, so another instance waits that much past `until` before it counts the lease as ended.
 */
export function leaseEnded(lease: { until: number }, now: number, uncertainty = 0): boolean {
  return lease.until <= now - uncertainty;
}
