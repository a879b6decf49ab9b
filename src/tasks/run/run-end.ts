import { decodeValue, encodeBase64url, randomBytes } from "../../state/index.js";
import { StoreError } from "../../store/index.js";
import { ErrorCode, ProtocolError } from "../../wire/index.js";
import type { CallContext } from "../../replay/call-context.js";
import { withRefusals } from "../../replay/answers.js";
import { isRetired, type ToolDefinition } from "../../authoring/definitions.js";
import { StepFailedError } from "../../authoring/effects.js";
import { AuthorCodeError, authorFailureText, CodeUnknownError, DivergenceError, type ErrorInfo } from "../../replay/errors.js";
import type { LiveCalls } from "../../replay/live-calls.js";
import type { RoundOutcome } from "../../replay/round/round.js";
import { errorToolResult, ResultShapeError, shapeToolResult } from "../../authoring/results.js";
import type { JournalRecord } from "../../journal/journal.js";
import type { TaskRecord } from "../record/record.js";
import type { createTaskRecords } from "../record/record-store.js";
import * as transition from "../record/transitions.js";
import type { Parked } from "../types.js";
import { jsonBytesWithin } from "../../util/json-limits.js";

// tasks/run/run-end.ts owns what a run of a task (tasks/run/run.ts) writes at its edges: whether it may
// begin (the definition and input it needs, or the task ended for want of them), and where its
// end leaves the task — completed, failed, parked on asks, asleep, waiting for a signal, handed
// back, or cancelled. Every write is a transition fenced on the run that holds the task.

/** Why a run stopped without an outcome of its own. */
export class Stop extends Error {
  constructor(readonly why: "cancelled" | "lost" | "shutdown") {
    super(`task run stopped: ${why}`);
  }
}

/** What a run's ends need from the engine. */
export interface RunEndParts {
  me: string;
  defs: ReadonlyMap<string, ToolDefinition>;
  update: ReturnType<typeof createTaskRecords>["update"];
  report: (error: unknown, info: ErrorInfo) => void;
  parked: LiveCalls<Parked & { owner: object }>;
  clock: () => number;
  ttlMs: number;
  time: { now(): number };
  /** Take a task that is due now over at once. */
  due: (id: string) => void;
  /** This instance lacks the code `id` was recorded by: its sweeper leaves it to others a while. */
  lack: (id: string) => void;
}

/** The writes at a run's edges, for the runs of one engine. */
export function createRunEnds({ me, defs, update, report, parked, clock, ttlMs, time, due, lack }: RunEndParts) {
  const holderOf = (run: string | undefined): transition.Holder => ({ owner: me, run });
  const infoOf = (r: TaskRecord): ErrorInfo => ({ method: "tools/call", target: r.tool, round: 0, callId: r.call, taskId: r.id });

  /** End the task with `outcome`: by the run that holds it (`run`), or a cancellation by anyone. */
  const finish = (id: string, outcome: transition.Outcome, run?: string) =>
    // A result is the principal's data; a failure or a cancellation must always be writable.
    update(id, (r) => transition.finish(r, outcome, outcome.status === "cancelled" ? undefined : holderOf(run)), outcome.status === "completed");

  /** The definition and input a run needs, or `undefined` when the run already ended the task. */
  async function prepare(record: TaskRecord, run: string | undefined): Promise<{ def: ToolDefinition; input: unknown } | undefined> {
    const def = defs.get(record.tool);
    if (def === undefined) {
      // Another deployment's tool: let an instance that has it take the task over.
      lack(record.id);
      await update(record.id, (r) => transition.handOver(r, holderOf(run)));
      report(new Error(`task ${record.id}: this instance has no tool "${record.tool}"; released for another instance`), infoOf(record));
      return undefined;
    }
    if (def.version !== record.version && !isRetired(def, record.version)) {
      // Recorded by code this instance does not have (newer, mid-deploy): left to one that has it.
      await handBack(record, new CodeUnknownError(`version ${JSON.stringify(record.version)} of tool "${record.tool}"`), run);
      return undefined;
    }
    if (def.version !== record.version) {
      const message = `The tool "${def.name}" changed version (from ${JSON.stringify(record.version ?? null)} to ${JSON.stringify(def.version ?? null)}) while the task ran`;
      if (def.onTaskFailure === "hold") {
        await holdFor(record, { kind: "journal_divergence", reason: `journal_divergence: ${message}` }, new Error(`task ${record.id}: ${message}`), run);
        return undefined;
      }
      await finish(record.id, { status: "failed", message: "The tool changed", error: { code: ErrorCode.InvalidParams, message, data: { reason: "journal_divergence" } } }, run);
      return undefined;
    }
    // The parsed input the first run got (a value text), or — kept only when none could carry
    // it — the arguments, parsed again.
    if (record.input !== undefined) return { def, input: decodeValue(record.input) };
    const input = def.input.safeParse(record.args);
    if (input.success) return { def, input: input.data };
    await finish(
      record.id,
      {
        status: "failed",
        message: "Invalid arguments",
        error: { code: ErrorCode.InvalidParams, message: `The task's arguments no longer fit the tool "${def.name}"`, data: { reason: "invalid_arguments" } },
      },
      run,
    );
    return undefined;
  }

  /** Write where a run that reached an outcome of its round left the task. */
  async function settle(
    record: TaskRecord,
    def: ToolDefinition,
    outcome: RoundOutcome,
    generator: { suspended: Parked["suspended"] | undefined; context: CallContext },
    run: string | undefined,
  ): Promise<void> {
    const id = record.id;
    const holder = holderOf(run);
    switch (outcome.type) {
      case "complete": {
        let result: ReturnType<typeof shapeToolResult>;
        try {
          result = shapeToolResult(def, outcome.value);
        } catch (error) {
          if (!(error instanceof ResultShapeError)) throw error;
          report(error, infoOf(record));
          result = errorToolResult(authorFailureText("Tool", def.name));
        }
        await finish(id, { status: "completed", result, journal: outcome.journal }, run);
        return;
      }
      case "input_required":
        if (outcome.race?.until !== undefined && outcome.race.until >= record.created + record.ttlMs) {
          await outlived(record, def, `race() whose first timer ends at ${new Date(outcome.race.until).toISOString()}`, "race a shorter timer", outcome.journal, run);
          return;
        }
        await park(record, def, outcome, { suspended: generator.suspended!, context: generator.context }, run);
        return;
      case "sleep":
        if (outcome.until >= record.created + record.ttlMs) {
          await outlived(record, def, `sleep() until ${new Date(outcome.until).toISOString()}`, "sleep less", outcome.journal, run);
          return;
        }
        // Nobody holds a sleeping task: it waits in the store (due at its wake time), and the
        // sweeper of whichever instance finds it due replays it from the journal.
        await update(id, (r) => transition.sleep(r, holder, outcome.journal, outcome.until), true);
        return;
      case "wait": {
        const onIt = record.awaits?.name === outcome.name && record.awaits.i === outcome.ordinal;
        const deadline = outcome.timeoutMs === undefined || onIt ? undefined : time.now() + outcome.timeoutMs;
        if (deadline !== undefined && deadline >= record.created + record.ttlMs) {
          await outlived(
            record,
            def,
            `waitForSignal("${outcome.name}") with a timeout at ${new Date(deadline).toISOString()}`,
            "wait less (or without a timeout: the task's lifetime ends the wait)",
            outcome.journal,
            run,
          );
          return;
        }
        const waiting = await update(id, (r) => transition.awaitSignal(r, holder, outcome, time.now()), true);
        // A value came early for this wait while the run was on its way to it: go on at once.
        const wake = waiting.written ? waiting.record?.wake : undefined;
        if (wake !== undefined && wake <= time.now()) due(id);
        return;
      }
      case "race": {
        if (outcome.until !== undefined && outcome.until >= record.created + record.ttlMs) {
          await outlived(record, def, `race() whose first timer ends at ${new Date(outcome.until).toISOString()}`, "race a shorter timer", outcome.journal, run);
          return;
        }
        const waiting = await update(id, (r) => transition.awaitRace(r, holder, outcome, time.now()), true);
        // A value came early for one of its waits while the run was on its way to it: go on at once.
        const wake = waiting.written ? waiting.record?.wake : undefined;
        if (wake !== undefined && wake <= time.now()) due(id);
        return;
      }
      case "task":
        throw new Error("a task cannot become a task again");
    }
  }

  /**
   * A sleep (or a retry's delay) or a wait's timeout that ends after the task's lifetime: the
   * task would be gone before it went on. The author's mistake, said plainly (`onError`), and
   * the task ends with the author-failure result, as a throwing step does.
   */
  async function outlived(record: TaskRecord, def: ToolDefinition, what: string, fix: string, journal: JournalRecord[], run: string | undefined): Promise<void> {
    const lifetime = `ttlMs ${record.ttlMs} from ${new Date(record.created).toISOString()}`;
    report(new Error(`task ${record.id}: ${what} passes the task's lifetime (${lifetime}); raise tasks.ttlMs or ${fix}`), infoOf(record));
    await finish(record.id, { status: "completed", result: errorToolResult(authorFailureText("Tool", def.name)), journal }, run);
  }

  /**
   * Hold the task for an operator (`onTaskFailure: "hold"`) instead of ending it; the error that
   * held it goes to `onError` as an ending would.
   */
  async function holdFor(record: TaskRecord, why: transition.Hold, error: unknown, run: string | undefined): Promise<void> {
    report(error, infoOf(record));
    await update(record.id, (r) => transition.hold(r, holderOf(run), why, time.now()));
  }

  /** Why a run's failure holds its task (`undefined`: it ends it): a step out of attempts, a divergence. */
  function holdReason(def: ToolDefinition, error: unknown): transition.Hold | undefined {
    if (def.onTaskFailure !== "hold") return undefined;
    const cause = error instanceof AuthorCodeError ? error.cause : error;
    if (cause instanceof StepFailedError) return { kind: "step_failed", reason: cause.message, step: cause.step };
    if (cause instanceof DivergenceError) return { kind: "journal_divergence", reason: `journal_divergence: ${cause.what}` };
    return undefined;
  }

  /** Give the task back for an instance that has the code it was recorded by; this one leaves it alone a while. */
  async function handBack(record: TaskRecord, error: CodeUnknownError, run: string | undefined): Promise<void> {
    lack(record.id);
    report(error, infoOf(record));
    await update(record.id, (r) => transition.handOver(r, holderOf(run)));
  }

  async function settleFailure(record: TaskRecord, def: ToolDefinition, error: unknown, stop: Stop | undefined, run: string | undefined): Promise<void> {
    const id = record.id;
    const why = stop?.why ?? (error instanceof Stop ? error.why : undefined);
    if (error instanceof CodeUnknownError && why === undefined) {
      await handBack(record, error, run);
    } else if (why === "cancelled") {
      await finish(id, { status: "cancelled" });
    } else if (why === "lost") {
      // Someone else runs it (or it ended): nothing to write.
    } else if (stop?.why === "shutdown") {
      await update(id, (r) => transition.release(r, holderOf(run)));
    } else if (error instanceof StoreError) {
      report(error, infoOf(record)); // the lease runs out; another instance takes over
    } else if (holdReason(def, error) !== undefined) {
      await holdFor(record, holdReason(def, error)!, error instanceof AuthorCodeError ? error.cause : error, run);
    } else if (error instanceof AuthorCodeError && !(error.cause instanceof ProtocolError)) {
      // Like a foreground call: the tool failed, the model sees an isError result.
      report(error.cause, infoOf(record));
      await finish(id, { status: "completed", result: errorToolResult(authorFailureText("Tool", def.name)) }, run);
    } else {
      const protocol = error instanceof AuthorCodeError ? (error.cause as ProtocolError) : error instanceof ProtocolError ? error : undefined;
      if (protocol === undefined) report(error, infoOf(record));
      const failure = protocol?.toJSON() ?? { code: ErrorCode.InternalError, message: "Internal error" };
      await finish(id, { status: "failed", message: failure.message, error: failure }, run);
    }
  }

  /** The task waits for answers: new asks get wire keys never used before in this task. */
  async function park(record: TaskRecord, def: ToolDefinition, outcome: Extract<RoundOutcome, { type: "input_required" }>, generator: Parked, run: string | undefined): Promise<void> {
    const nonce = encodeBase64url(randomBytes(16));
    const asks = { journal: outcome.journal, outstanding: outcome.outstanding, partial: outcome.partial, requests: withRefusals(outcome.inputRequests, outcome.refused), race: outcome.race };
    const parkedNow = await update(record.id, (r) => transition.park(r, holderOf(run), asks, nonce, time.now()), true);
    // A race's value kept early that the run did not see, or its timer already ended: go on at once.
    if (parkedNow.written && parkedNow.record?.race !== undefined && parkedNow.record.wake !== undefined && parkedNow.record.wake <= time.now()) due(record.id);
    // The generator holds the task's input (a client's to choose): charged with it.
    const held = (record.input?.length ?? 0) + (jsonBytesWithin(record.args, Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY) as number);
    if (parkedNow.written) parked.put(`${record.id}.${nonce}`, { ...generator, owner: def }, clock() + ttlMs, undefined, false, held);
    else if (parkedNow.record?.cancel === true) await finish(record.id, { status: "cancelled" });
  }

  return { finish, prepare, settle, settleFailure };
}
