import type { ToolDefinition } from "../authoring/definitions.js";
import type { JournalRecord } from "../journal/journal.js";
import type { CallContext } from "../replay/call-context.js";
import type { ErrorInfo } from "../replay/errors.js";
import type { Suspended } from "../replay/round/round.js";
import type { RoundTrace } from "../replay/round-trace.js";
import type { PrincipalBytes, Store, StoreClock } from "../store/index.js";
import type { CreateTaskResult, GetTaskResult } from "../wire/index.js";
import type { SignalDelivered, TextSigner } from "./signals.js";
import type { TaskWatchHandle, TaskWatchSink } from "./watch.js";

// The task engine's vocabulary: its options, what starting a task takes, and what it offers.

/** How long a task is kept when `tasks.ttlMs` does not say: 1 hour. */
export const DEFAULT_TASK_TTL_MS = 60 * 60 * 1000;

/** Task timing: lifetime, suggested poll interval, lease, sweep and cancel grace. */
export interface TaskOptions {
  /**
   * A task's lifetime, from its creation (its `ttlMs`): how long it and its outcome are kept.
   * A task still working when it ends is failed then (`task_lifetime_ended`) and that outcome is
   * kept 10 minutes more; a sleep, retry delay or wait timeout past it is an author error when
   * reached. Default 1 hour.
   */
  ttlMs?: number;
  /** The polling interval suggested to clients (`pollIntervalMs`). Default 500 ms. */
  pollIntervalMs?: number;
  /**
   * How long an instance's claim on a running task lasts without renewal (renewed while it runs).
   * If the instance dies, another one takes the task over within `leaseMs + sweepMs`. Default 10 s.
   */
  leaseMs?: number;
  /** How often each instance looks for tasks whose lease ran out. Default `leaseMs / 2`. */
  sweepMs?: number;
  /** After `tasks/cancel`, how long the task's code has to stop before it is marked cancelled anyway. Default 2 s. */
  cancelGraceMs?: number;
  /**
   * Most tasks the store keeps for one principal at once (running or ended, until their `ttlMs`
   * runs out). Past it that principal's new tasks are refused (`-32603`, `principal_task_limit`);
   * other principals are not affected. Requests without a principal share one allowance. A soft
   * bound: starts racing on several instances may pass it by their number. Default 1000.
   */
  maxPerPrincipal?: number;
}

/** A call about to become a task. */
export interface StartTask {
  def: ToolDefinition;
  args: Record<string, unknown>;
  /** The input as the tool's schema parsed it (kept instead of `args` when a value text can carry it). */
  input?: unknown;
  principal: string | undefined;
  /** The clientCapabilities of the request starting it: they gate the task's asks. */
  caps: unknown;
  callId: string;
  /**
   * The task's id when the caller chose it (`newTaskId()`) before anything was written, so that
   * repeating a start whose outcome was lost finds this task instead of making a second one.
   */
  taskId?: string;
  /** What the call did before it became a task (empty when it is a task from its start). */
  journal: JournalRecord[];
  message?: string;
  /** The generator to go on with (the round that reached `runAsTask()` on this instance). */
  resume?: Parked;
}

/** A generator and the per-call objects it closed over, kept between runs on one instance. */
export interface Parked {
  suspended: Suspended;
  /** The generator's `ctx`; its call signal is what cancelling the task aborts. */
  context: CallContext;
}

/** The task engine one runtime makes on first use. */
export interface TaskEngine {
  /** Tools this instance can run when it takes a task over without a request naming them. */
  define(defs: readonly ToolDefinition[]): void;
  start(task: StartTask): Promise<CreateTaskResult>;
  get(taskId: string, principal: string | undefined): Promise<GetTaskResult>;
  /** Deliver answers keyed by wire key; keys not outstanding are ignored. */
  update(taskId: string, responses: ReadonlyMap<string, unknown>, principal: string | undefined): Promise<void>;
  cancel(taskId: string, principal: string | undefined): Promise<void>;
  /**
   * Deliver `value` to the wait a signal token opens, and run the task on with it here: resolves
   * once the task took it (its schema accepted it), or kept it for a wait it has not reached; a
   * refusal is a `ProtocolError` (-32602) with `data.reason` one of `SignalRefusal`.
   */
  signal(token: unknown, value: unknown): Promise<SignalDelivered>;
  /** Follow `taskIds` for their caller (`notifications/tasks`): those `principal` owns are acknowledged (tasks/watch.ts). */
  watch(taskIds: readonly string[], principal: string | undefined, sink: TaskWatchSink): Promise<TaskWatchHandle>;
  /** Settles once every run this instance started has ended. */
  idle(): Promise<void>;
  /** Stop sweeping; runs in progress stop and release their lease for another instance. */
  close(): Promise<void>;
}

/** What the engine needs from its runtime. */
export interface Deps {
  store: Store;
  /** Task timing, every default filled in (runtime/options.ts resolves them). */
  options: Required<TaskOptions>;
  report: (error: unknown, info: ErrorInfo) => void;
  /** This instance's clock: what `now()` records, and the expiry of generators parked here. */
  clock: () => number;
  /**
   * The clock leases, task times and expiry are measured on: shared by every instance (the
   * store's), so that one machine's fast clock neither steals a live task nor keeps a dead one.
   */
  time: StoreClock;
  /** Each principal's share of the store: a task record's first write and its growth are counted. */
  bytes: PrincipalBytes;
  /** Signs and checks signal tokens (the runtime's state codec). */
  signer: TextSigner;
  /** Where signal tokens are POSTed (`ctx.signalUrl`): the token is appended. */
  signalBaseUrl: string | undefined;
  /** The runtime's round observer: each background run of a task is traced as a round. */
  onRound?: ((trace: RoundTrace) => void) | undefined;
}
