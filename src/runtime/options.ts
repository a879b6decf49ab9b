import type { StateCodec, StateCodecOptions } from "../state/index.js";
import type { Store } from "../store/index.js";
import { DEFAULT_TASK_TTL_MS, type TaskOptions } from "../tasks/types.js";
import { integerOption } from "../util/options.js";
import type { CallToolResult, CreateTaskResult, GetPromptResult, InputRequiredResult, ReadResourceResult } from "../wire/index.js";
import type { ErrorInfo } from "../replay/errors.js";
import type { RoundTrace } from "./trace.js";
import { TOLERATED_CLOCK_SKEW_MS } from "./single-use/skew.js";

// What `createRuntime` is given and what its methods answer, and the defaults of every option.

/** What the transport knows about the request, beyond its params. */
export interface RequestInfo {
  /** This request's `io.modelcontextprotocol/clientCapabilities` (never an earlier request's). */
  clientCapabilities?: unknown;
  /** The authenticated principal (e.g. the OAuth subject); the state is bound to it. */
  principal?: string;
  /** Cancellation of this request. */
  signal?: AbortSignal;
  /**
   * Where the round's `progress(...)` goes when the request asked for progress (a host maps it
   * to `notifications/progress`; `register` does). In a task, progress goes to the task instead.
   */
  progress?: (message: string, done: number | undefined, total: number | undefined) => Promise<void>;
}

/** Bounds on what one request may carry and one call may take; each breach is a `-32602` with a stable `data.reason`. */
export interface RuntimeLimits {
  /** Rounds one call may take before it is refused (a client cannot loop forever). Default 64. */
  maxRounds?: number;
  /** Most `inputResponses` entries one request may carry. Default 64. */
  maxInputResponses?: number;
  /** Largest `inputResponses`, keys included (approximate JSON bytes). Default 262144 (256 KiB). */
  maxInputResponseBytes?: number;
  /** Deepest nesting inside `inputResponses`. Default 32. */
  maxInputResponseDepth?: number;
  /** Largest arguments, keys included (approximate JSON bytes). Default 1048576 (1 MiB). */
  maxArgumentBytes?: number;
  /** Deepest nesting inside arguments. Default 64. */
  maxArgumentDepth?: number;
}

/** Options of `createRuntime`. */
export interface RuntimeOptions {
  /** A codec, or the options to build one (see `createStateCodec`). */
  state: StateCodec | StateCodecOptions;
  /**
   * How many suspended generators this instance keeps so the next round of a call can resume
   * instead of replaying (a pure speed-up: any round can always replay from the state).
   * Default 10,000 (`liveCallBytes` bounds them first for most tools); 0 turns it off.
   */
  liveCalls?: number;
  /**
   * The bytes suspended generators may hold together (each is charged a measured overhead plus
   * twice its state; see docs/replay.md "Live calls"). Default 16 MiB. Past it the oldest are dropped,
   * which only means their next round replays.
   */
  liveCallBytes?: number;
  /**
   * Told about author-code failures and server-side errors (never about client mistakes), with
   * the definition, round and call id. Default: logged to stderr with the stack.
   */
  onError?: (error: unknown, info: ErrorInfo) => void;
  limits?: RuntimeLimits;
  /**
   * Told about every request of a multi-round call, after its response is decided: call id,
   * round, how it went on (first, resumed, replayed, or a repeat answered from the store),
   * records replayed, steps run with their durations, asks sent, state sizes, time, outcome
   * (refused requests too, with the error's reason). Off by default (nothing is measured). `formatRoundTrace` makes a log
   * line of it; `openTelemetryObserver` (mcp-yield/otel) makes spans.
   */
  onRound?: (trace: RoundTrace) => void;
  /** Clock for `now()` (ms). */
  clock?: () => number;
  /**
   * Development check (default off): after every round, replay the call from the top on the
   * state the round produced, as another instance would, and require the same asks or result.
   * A difference fails the round with `-32603`, `reason: "nondeterministic"`, naming the round
   * and the first differing effect. Code between effects runs twice.
   */
  verifyReplay?: boolean;
  /**
   * Where tasks are kept (tasks extension), shared by every instance that should answer their
   * `tasks/*` requests. Default: an in-memory store, which serves one instance.
   */
  store?: Store;
  /** Task timing: lifetime, suggested poll interval, lease, sweep, cancel grace (see `TaskOptions`). */
  tasks?: TaskOptions;
  /**
   * With a `store`: each `requestState` is redeemed at most once (default `true`). The first
   * request presenting it runs the round and its response is kept until the state expires; the
   * same request again gets that response, a different one `-32602` `state_redeemed`. Without a
   * store there is no single use: a state may be presented again within its lifetime.
   */
  singleUse?: boolean;
  /**
   * With a `store`: how long a foreground round that runs steps holds its claim without
   * renewal (renewed every third of it while the round runs). An instance that dies mid-step
   * stops renewing; the same request again, on another instance, takes the round over once
   * this has passed (until then it waits, up to 30 s, or gets `round_in_progress`). Shorter
   * means a faster takeover and more store writes per long step. Default 15000.
   */
  roundLeaseMs?: number;
  /**
   * With a `store`: a journal larger than this (JSON bytes) is kept in the store for the state's
   * lifetime, and the token carries a sealed reference and digest instead. Default 16384.
   */
  spillBytes?: number;
  /**
   * Each principal's share of the store: the bytes its calls may make the store keep — task
   * records as they grow, journals spilled past `spillBytes` — counted over the longest time
   * they live (tasks' `ttlMs` or the state's lifetime, whichever is longer). Past it that
   * principal's new tasks, task answers and task steps get `-32603` with `data.reason:
   * "principal_byte_limit"` (a running task that passes it ends `failed` with that error; its
   * steps never run again), and its large journals travel in the token where they fit; other
   * principals are not affected. Requests without a principal share one allowance. The
   * single-use records of a principal's rounds (a round's kept response, `_meta.idempotencyKey`
   * records) are counted apart, against the same size, over the time they live: past it that
   * principal's rounds get `principal_byte_limit` before anything runs. Requests without a
   * principal are not counted for those (nobody to tell apart; the store's own bound holds).
   * Default 16 MiB; 0 turns it off.
   */
  maxStoreBytesPerPrincipal?: number;
  /** Signals into waiting tasks (`waitForSignal`). */
  signals?: {
    /**
     * The URL signal tokens are appended to (`ctx.signalUrl(name)`), e.g.
     * `https://example.com/signals/` — where `createSignalHandler(runtime)` is served.
     */
    baseUrl?: string;
  };
}

/** What one round of `tools/call` answers: complete, input required, or a task. */
export type ToolCallResult = CallToolResult | InputRequiredResult | CreateTaskResult;

/** The empty acknowledgement of `tasks/update` and `tasks/cancel`. */
export interface TaskAck {
  resultType: "complete";
}
/** What one round of `prompts/get` answers. */
export type PromptGetResult = GetPromptResult | InputRequiredResult;
/** What one round of `resources/read` answers. */
export type ResourceReadResult = ReadResourceResult | InputRequiredResult;

/** The limits with every default filled in, each checked (a bad one throws at construction). */
export function resolveLimits(given: RuntimeLimits = {}): Required<RuntimeLimits> {
  return {
    maxRounds: integerOption("limits.maxRounds", given.maxRounds, 64),
    maxInputResponses: integerOption("limits.maxInputResponses", given.maxInputResponses, 64),
    maxInputResponseBytes: integerOption("limits.maxInputResponseBytes", given.maxInputResponseBytes, 256 * 1024),
    maxInputResponseDepth: integerOption("limits.maxInputResponseDepth", given.maxInputResponseDepth, 32),
    maxArgumentBytes: integerOption("limits.maxArgumentBytes", given.maxArgumentBytes, 1024 * 1024),
    maxArgumentDepth: integerOption("limits.maxArgumentDepth", given.maxArgumentDepth, 64),
  };
}

/** Task timing with every default filled in, each checked (a bad one throws at construction). */
export function resolveTaskOptions(given: TaskOptions = {}): Required<TaskOptions> {
  const positive = (name: keyof TaskOptions, fallback: number) => integerOption(`tasks.${name}`, given[name], fallback);
  const leaseMs = positive("leaseMs", 10_000);
  return {
    ttlMs: positive("ttlMs", DEFAULT_TASK_TTL_MS),
    pollIntervalMs: positive("pollIntervalMs", 500),
    leaseMs,
    sweepMs: positive("sweepMs", Math.max(1, Math.floor(leaseMs / 2))),
    cancelGraceMs: positive("cancelGraceMs", 2000),
    maxPerPrincipal: positive("maxPerPrincipal", 1000),
  };
}

/**
 * Suspended generators an instance keeps by default: more than the default byte bound holds of a
 * small tool's calls (≈ 2.3 KiB charged each, 7,000 in 16 MiB), so bytes bound them first.
 */
export const DEFAULT_LIVE_CALLS = 10_000;

/** Every default `createRuntime` applies, resolved in one place (each checked; a bad one throws at construction). */
export function resolveRuntimeOptions(options: RuntimeOptions, stateLifetimeMs: number) {
  const tasks = resolveTaskOptions(options.tasks);
  return {
    limits: resolveLimits(options.limits),
    tasks,
    clock: options.clock ?? Date.now,
    onError: options.onError ?? logError,
    liveCalls: integerOption("liveCalls", options.liveCalls, DEFAULT_LIVE_CALLS, 0),
    liveCallBytes: integerOption("liveCallBytes", options.liveCallBytes, 16 * 1024 * 1024, 0),
    maxStoreBytesPerPrincipal: integerOption("maxStoreBytesPerPrincipal", options.maxStoreBytesPerPrincipal, 16 * 1024 * 1024, 0),
    /** What principal shares count over: the longest life of what is counted, a task or a spilled journal (the state's, and the skew margin). */
    principalWindowMs: Math.max(tasks.ttlMs, stateLifetimeMs + TOLERATED_CLOCK_SKEW_MS),
    spillBytes: integerOption("spillBytes", options.spillBytes, 16 * 1024),
    singleUse: options.singleUse !== false,
    roundLeaseMs: integerOption("roundLeaseMs", options.roundLeaseMs, 15_000),
    verifyReplay: options.verifyReplay === true,
  };
}

/** Errors nobody handled are still seen: the definition, round and stack on stderr. */
export function logError(error: unknown, info: ErrorInfo): void {
  console.error(`[mcp-yield] ${info.method} ${info.target}, round ${info.round} (call ${info.callId}):`, error);
}
