import type { JournalFixture } from "../../journal/fixture.js";
import { describeJournal, type InspectedRecord } from "../../journal/inspect.js";
import { digestOf } from "../../state/index.js";
import { createPrincipalBytes, createStoreClock, isAfter, monotonicNow, type Store } from "../../store/index.js";
import type { TaskStatus } from "../../wire/index.js";
import type { TaskRecord } from "../record/record.js";
import { principalDigest, type TaskFilter, taskMatcher } from "./filter.js";
import { decodeCursor, encodeCursor, indexesFor, readListed } from "./list.js";
import { listEntriesOf } from "../record/list-index.js";
import { withoutFailedAttempts } from "../../journal/journal.js";
import { cancel as cancelTask, failHeld, retryHeld, stateOf } from "../record/transitions.js";
import { createTaskRecords, TASKS } from "../record/record-store.js";

// Operating tasks from outside the servers (`npx mcp-yield tasks …`, or code of your own): list
// them, look at one with its journal, cancel one. The protocol has no `tasks/list` (a client sees
// only its own tasks, by id); an operator reads the store the instances share.

/** One task as a list shows it. */
export interface TaskSummary {
  taskId: string;
  tool: string;
  /** The definition's `version` the task started under. */
  version?: string;
  status: TaskStatus;
  /** What the task is doing now, in words: running where, asleep until when, waiting for which signal or answer. */
  state: string;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ageMs: number;
  /** Who started it: a digest (the first 16 characters of its SHA-256, base64url — as the per-principal keys use) unless `principals: true`; `null` for none. */
  principal: string | null;
  /** Journal records so far. */
  records: number;
}

/** One task in full: its summary, its journal in words, its asks, its outcome. */
export interface TaskDetail extends TaskSummary {
  callId: string;
  expiresAt: string;
  /** When an operator last retried it after a hold. */
  retriedAt?: string;
  /** The journal record by record; `at`: when each was written, where known. */
  journal: Array<InspectedRecord & { at?: string }>;
  /** Asks it waits for (`input_required`): wire key → method. */
  waitingFor: Record<string, string>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

/** What `list` takes: filters and a page. */
export interface TaskListOptions extends TaskFilter {
  /** Most tasks returned. Default 100. */
  limit?: number;
  /** Where the page starts: the `next` of the page before (`listPage`). */
  after?: string;
  /** Show principals as they are instead of as digests. */
  principals?: boolean;
}

/** A page of a list, and where the next one starts. */
export interface TaskPage {
  tasks: TaskSummary[];
  /** Pass as `after` for the next page; absent when this page is the last. */
  next?: string;
}

/** An operator's view of the tasks in a store. */
export interface TaskAdmin {
  /** Tasks in the store, oldest first (by creation), filtered: the first page (`listPage` for the others). */
  list(options?: TaskListOptions): Promise<TaskSummary[]>;
  /**
   * A page of tasks, oldest first (by creation), and the cursor of the next one. A filter that
   * names held tasks, a principal, a tool or statuses reads that index of the store — a page
   * costs the same over a million tasks as over ten — and the others are checked on each task
   * it reads; `since` starts the read at that time.
   */
  listPage(options?: TaskListOptions): Promise<TaskPage>;
  /**
   * Put every task into the indexes a filtered list reads, as its record is now: after an
   * upgrade from a version without them (its tasks are listed unfiltered only until then), or
   * after instances of such a version changed tasks. Returns how many tasks it indexed.
   */
  reindex(): Promise<number>;
  /** One task, `undefined` when the store has no such task. */
  show(taskId: string, options?: { principals?: boolean }): Promise<TaskDetail | undefined>;
  /**
   * Cancel a task as `tasks/cancel` does (the same transition): at once unless it runs under a
   * live lease, then by its run at the next heartbeat. Returns the status it now has, `undefined`
   * for no such task.
   */
  cancel(taskId: string): Promise<TaskStatus | undefined>;
  /**
   * Go on with a task held for an operator ("needs attention"): from the failed step, started
   * over at attempt 1 (completed steps are not run again), or — a divergence — replayed by the
   * code deployed since. It keeps its id; whichever instance sweeps next runs it. Returns its
   * status (`working`), `undefined` for no such task; throws for a task that is not held.
   */
  retry(taskId: string): Promise<TaskStatus | undefined>;
  /**
   * End a held task: `failed`, with `reason` as its message (default: why it was held). Returns
   * `failed`, `undefined` for no such task; throws for a task that is not held (cancel it instead).
   */
  fail(taskId: string, reason?: string): Promise<TaskStatus | undefined>;
  /**
   * One action on every task `filter` selects (`retry` and `fail` only change held ones; the
   * others are counted as skipped, with why). Selected first, then acted on, `concurrency` at a
   * time (default 16); `dryRun` only selects. At least one condition must be given.
   */
  bulk(action: "cancel" | "retry" | "fail", filter: TaskFilter, options?: { dryRun?: boolean; reason?: string; concurrency?: number }): Promise<BulkOutcome>;
  /** The task's journal as a fixture for `replayFixtures` (no principal, no secret); `undefined` for no such task. */
  exportFixture(taskId: string): Promise<JournalFixture | undefined>;
}

/** What a bulk action did. */
export interface BulkOutcome {
  action: "cancel" | "retry" | "fail";
  /** Tasks the filter selected. */
  matched: number;
  /** Tasks the action changed (0 for a dry run). */
  changed: number;
  /** Selected tasks it did not change, and why (ended, not held, gone). */
  skipped: Array<{ taskId: string; why: string }>;
  /** The selected tasks' ids. */
  taskIds: string[];
  dryRun: boolean;
}

const PAGE = 200;

/** What a task is doing now, in words, from the state its record is in (`transition.stateOf`). */
function describeState(r: TaskRecord, now: number): string {
  const state = stateOf(r);
  switch (state.status) {
    case "input_required":
      if (r.race !== undefined)
        return `waiting in a race for ${r.waiting.length === 1 ? "an answer" : "any one answer"} (${r.waiting.map((w) => w.wire).join(", ")})${r.race.w.length > 0 ? ` or signal ${r.race.w.map((w) => `"${w.name}"`).join(", ")}` : ""}${r.race.until !== undefined ? ` until ${new Date(r.race.until).toISOString()}` : ""}`;
      return `waiting for ${r.waiting.length === 1 ? "an answer" : `${r.waiting.length} answers`} (${r.waiting.map((w) => w.wire).join(", ")})`;
    case "completed":
    case "failed":
      return r.cancel === true ? `${state.status} (a cancel came too late)` : state.status;
    case "cancelled":
      return state.status;
    case "working":
      // Past its time, a sleeping or waiting task is due: whichever instance sweeps next goes on with it.
      switch (state.phase) {
        case "awaiting_signal": {
          const { signal, deadline } = state;
          if (deadline === undefined) return `waiting for signal "${signal}"`;
          return deadline > now
            ? `waiting for signal "${signal}" until ${new Date(deadline).toISOString()}`
            : `waiting for signal "${signal}": timed out at ${new Date(deadline).toISOString()}, due to go on at the next sweep`;
        }
        case "racing": {
          const on = state.signals.length === 0 ? "" : ` for signal${state.signals.length === 1 ? "" : "s"} ${state.signals.map((n) => `"${n}"`).join(", ")}`;
          if (state.until === undefined) return `waiting in a race${on}`;
          return state.until > now
            ? `waiting in a race${on} until ${new Date(state.until).toISOString()}`
            : `waiting in a race${on}: its timer ended at ${new Date(state.until).toISOString()}, due to go on at the next sweep`;
        }
        case "held":
          return `needs attention since ${new Date(state.since).toISOString()}: ${state.reason} (tasks retry or tasks fail)`;
        case "asleep":
          return state.wake > now ? `asleep until ${new Date(state.wake).toISOString()}` : `woke at ${new Date(state.wake).toISOString()}, due to go on at the next sweep`;
        case "running": {
          if (state.cancelling) return "being cancelled (its run stops at its next heartbeat)";
          const { lease } = state;
          if (lease === undefined) return "working";
          return lease.until > now ? `running on instance ${lease.owner}` : `owner ${lease.owner} gone (lease ran out ${Math.round((now - lease.until) / 1000)} s ago; the next sweep takes it over)`;
        }
      }
  }
}

function summaryOf(r: TaskRecord, now: number, principals: boolean): TaskSummary {
  return {
    taskId: r.id,
    tool: r.tool,
    ...(r.version !== undefined ? { version: r.version } : {}),
    status: r.status,
    state: describeState(r, now),
    ...(r.message !== undefined ? { statusMessage: r.message } : {}),
    createdAt: new Date(r.created).toISOString(),
    lastUpdatedAt: new Date(r.updated).toISOString(),
    ageMs: Math.max(0, now - r.created),
    principal: r.principal === undefined ? null : principals ? r.principal : principalDigest(r.principal),
    records: r.journal.length,
  };
}

/** A failure's reason, when given, is text. */
function checkReason(reason: unknown): void {
  if (reason !== undefined && (typeof reason !== "string" || reason.trim() === "")) throw new TypeError("fail: the reason must be a non-empty string");
}

/** The operator's view of the tasks in `store` (the one the servers share). */
export function createTaskAdmin({ store }: { store: Store }): TaskAdmin {
  const time = createStoreClock({ store, local: monotonicNow });
  // Operator writes (a cancel) are never charged to a principal's share.
  const bytes = createPrincipalBytes({ store, time, limit: Number.MAX_SAFE_INTEGER, windowMs: 60_000 });
  const records = createTaskRecords({ store, time, bytes });

  /** The change each action makes to one task's record (`false`: it does not apply to the record as it is). */
  const changeOf = (action: BulkOutcome["action"], reason?: string): ((r: TaskRecord) => TaskRecord | false) =>
    action === "cancel" ? (r) => cancelTask(r, time.now()) : action === "retry" ? (r) => retryHeld(r, time.now(), withoutFailedAttempts) : (r) => failHeld(r, reason);

  /** A retry or fail by id: the task's status, `undefined` for no such task, an error for one not held. */
  function heldOutcome(taskId: string, action: "retry" | "fail", { record, written }: { record: TaskRecord | undefined; written: boolean }): TaskStatus | undefined {
    if (record === undefined) return undefined;
    if (!written)
      throw new Error(
        `task ${taskId} is not held for an operator (it is ${describeState(record, time.now())}): only a held task can be ${action === "retry" ? "retried" : "failed"}${action === "fail" ? " — cancel it instead" : ""}`,
      );
    return record.status;
  }

  const loadRecord = async (id: string) => (await records.load(id))?.record;

  /** A page of the records `filter` selects, from `after` (a cursor) or its `since`. */
  async function select(filter: TaskFilter & { after?: string }, limit: number) {
    const match = taskMatcher(filter);
    const since = filter.since === undefined ? undefined : { at: filter.since.getTime(), member: "" };
    const after = filter.after === undefined ? undefined : decodeCursor(filter.after);
    const start = after === undefined ? since : since === undefined || isAfter(after, since) ? after : since;
    return readListed(store, loadRecord, { groups: indexesFor(filter), start, match, limit });
  }

  const admin: TaskAdmin = {
    async list(options = {}) {
      return (await admin.listPage(options)).tasks;
    },

    async listPage(options = {}) {
      const limit = options.limit ?? 100;
      if (!Number.isSafeInteger(limit) || limit < 1) throw new TypeError(`limit must be a positive integer, got ${limit}`);
      await time.sync();
      const { records: found, last } = await select(options, limit);
      const now = time.now();
      return { tasks: found.map((r) => summaryOf(r, now, options.principals === true)), ...(found.length === limit && last !== undefined ? { next: encodeCursor(last) } : {}) };
    },

    async reindex() {
      await time.sync();
      let indexed = 0;
      for (let page = await store.members(TASKS, PAGE); page.length > 0; page = page.length < PAGE ? [] : await store.members(TASKS, PAGE, page.at(-1))) {
        const loaded = await Promise.all(page.map(({ member }) => loadRecord(member)));
        await store.index(loaded.flatMap((r) => (r === undefined ? [] : listEntriesOf(r))));
        indexed += loaded.filter((r) => r !== undefined).length;
      }
      return indexed;
    },

    async bulk(action, filter, options = {}) {
      if (!["cancel", "retry", "fail"].includes(action)) throw new TypeError(`bulk: the action is cancel, retry or fail, got ${JSON.stringify(action)}`);
      if (Object.values(filter).every((v) => v === undefined || v === false)) throw new TypeError("bulk: give at least one condition (status, tool, principal, since, needsAttention)");
      const concurrency = options.concurrency ?? 16;
      if (!Number.isSafeInteger(concurrency) || concurrency < 1) throw new TypeError(`bulk: concurrency must be a positive integer, got ${concurrency}`);
      checkReason(options.reason);
      await time.sync();
      const taskIds = (await select(filter, Number.POSITIVE_INFINITY)).records.map((r) => r.id);
      const outcome: BulkOutcome = { action, matched: taskIds.length, changed: 0, skipped: [], taskIds, dryRun: options.dryRun === true };
      if (outcome.dryRun) return outcome;
      const change = changeOf(action, options.reason);
      let next = 0;
      const worker = async () => {
        while (next < taskIds.length) {
          const taskId = taskIds[next++]!;
          // The same transitions as the one-task actions; a record they do not apply to is named.
          const { record, written } = await records.update(taskId, change);
          if (written) outcome.changed++;
          else
            outcome.skipped.push({
              taskId,
              why:
                record === undefined
                  ? "gone (expired)"
                  : action !== "cancel"
                    ? "not held for an operator"
                    : record.cancel === true && record.status === "working"
                      ? "a cancel is under way"
                      : `already ${record.status}`,
            });
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, taskIds.length) }, worker));
      return outcome;
    },

    async show(taskId, options = {}) {
      await time.sync();
      const entry = await records.load(taskId);
      if (entry === undefined) return undefined;
      const r = entry.record;
      return {
        ...summaryOf(r, time.now(), options.principals === true),
        callId: r.call,
        expiresAt: new Date(r.created + r.ttlMs).toISOString(),
        ...(r.retried !== undefined ? { retriedAt: new Date(r.retried).toISOString() } : {}),
        journal: describeJournal(r.journal).map((d, i) => (r.times?.[i] ? { ...d, at: new Date(r.times[i]!).toISOString() } : d)),
        waitingFor: Object.fromEntries(r.waiting.filter((w) => !Object.hasOwn(r.answers, w.key)).map((w) => [w.wire, (w.request as { method?: string })?.method ?? "?"])),
        ...(r.result !== undefined ? { result: r.result } : {}),
        ...(r.error !== undefined ? { error: r.error } : {}),
      };
    },

    async exportFixture(taskId) {
      const entry = await records.load(taskId);
      if (entry === undefined) return undefined;
      const r = entry.record;
      const end: JournalFixture["end"] =
        r.status === "input_required"
          ? { at: "ask", outstanding: r.outstanding, ...(Object.keys(r.partial).length > 0 ? { partial: r.partial } : {}) }
          : r.status === "completed"
            ? { at: "complete" }
            : { at: "running" };
      return {
        format: "mcp-yield/journal-fixture",
        v: 1,
        tool: r.tool,
        ...(r.version !== undefined ? { version: r.version } : {}),
        source: "task",
        exportedAt: new Date().toISOString(),
        callId: r.call,
        // A task keeps the parsed input (the arguments as sent only when it could not).
        ...(r.input !== undefined ? { input: r.input } : { arguments: r.args, argumentsDigest: digestOf(r.args) }),
        records: r.journal,
        end,
      };
    },

    async retry(taskId) {
      await time.sync();
      return heldOutcome(taskId, "retry", await records.update(taskId, changeOf("retry")));
    },

    async fail(taskId, reason) {
      checkReason(reason);
      return heldOutcome(taskId, "fail", await records.update(taskId, changeOf("fail", reason)));
    },

    async cancel(taskId) {
      const { record } = await records.update(taskId, changeOf("cancel"));
      if (record === undefined) return undefined;
      return record.status;
    },
  };
  return admin;
}
