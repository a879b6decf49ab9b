import { integerOption } from "../util/options.js";
import type { z } from "zod";
import { canonicalJson, createStateCodec, digestOf, type MintedState, type OpenedState, randomUuid, type StateBinding, type StateCodec, type StateCodecOptions, StateError } from "../state/index.js";
import { digestOfText } from "../state/canonical.js";
import { createMemoryStore, type Store, StoreError } from "../store/index.js";
import {
  type CallToolResult,
  callToolParams,
  capabilityCheck,
  type CreateTaskResult,
  declaresExtension,
  type GetTaskResult,
  TASKS_EXTENSION,
  TASKS_REQUIRED_CAPABILITIES,
  taskIdParams,
  updateTaskParams,
  describeZodError,
  ErrorCode,
  type GetPromptResult,
  getPromptParams,
  type InputRequiredResult,
  ProtocolError,
  type ReadResourceResult,
  readResourceParams,
} from "../wire/index.js";
import { CallContext } from "../replay/call-context.js";
import type { Definition, PromptDefinition, ResourceDefinition, ResourceTemplateDefinition, RunContext, RunGenerator, ToolDefinition } from "../authoring/definitions.js";
import { AuthorCodeError, DivergenceError, type ErrorInfo, NO_ENVELOPE_HINT, NondeterminismError } from "../replay/errors.js";
export type { ErrorInfo } from "../replay/errors.js";
import { type JournalRecord, parseHeader, payloadFrom, parseLines, recordLines, type StateHeader, type StatePayload } from "../journal/journal.js";
import { parsePayloadV1 } from "../journal/format1.js";
import { type LiveCall, LiveCalls } from "../replay/live-calls.js";
import { exceedsJsonLimits } from "./measure.js";
import { plainCallToolParams, plainGetPromptParams, plainReadResourceParams } from "../wire/plain-params.js";
import { Round, type RoundOutcome, type Suspended, type Traced } from "../replay/round.js";
import { errorToolResult, ResultShapeError, shapePromptResult, shapeResourceResult, shapeToolResult } from "../authoring/results.js";
import { createTaskEngine, type TaskEngine, type TaskOptions } from "../tasks/engine.js";
import { createRedemption, type Redemption } from "./redeem.js";
import { createSpill, type SpillRef } from "./spill.js";
import type { RoundTrace } from "./trace.js";
import { checkReplay } from "../replay/double-run.js";

/** What the transport knows about the request, beyond its params. */
export interface RequestInfo {
  /** This request's `io.modelcontextprotocol/clientCapabilities` (never an earlier request's). */
  clientCapabilities?: unknown;
  /** The authenticated principal (e.g. the OAuth subject); the state is bound to it. */
  principal?: string;
  /** Cancellation of this request. */
  signal?: AbortSignal;
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
   * Default 1000; 0 turns it off.
   */
  liveCalls?: number;
  /**
   * The bytes suspended generators may hold together (each is charged a measured overhead plus
   * twice its state; see README "Live calls"). Default 16 MiB. Past it the oldest are dropped,
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
   * With a `store`: a journal larger than this (JSON bytes) is kept in the store for the state's
   * lifetime, and the token carries a sealed reference and digest instead. Default 16384.
   */
  spillBytes?: number;
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

/** The framework-free runtime `createRuntime` builds: one method per request kind, plus the tasks methods. */
export interface Runtime {
  readonly codec: StateCodec;
  readonly limits: Required<RuntimeLimits>;
  /** Run one round of `tools/call`. Throws `ProtocolError` for anything that must be a JSON-RPC error. */
  callTool(def: ToolDefinition, params: unknown, request?: RequestInfo): Promise<ToolCallResult>;
  /** Run one round of `prompts/get`. */
  getPrompt(def: PromptDefinition, params: unknown, request?: RequestInfo): Promise<PromptGetResult>;
  /** Run one round of `resources/read`, of a resource or of a resource template (bound to the concrete uri). */
  readResource(def: ResourceDefinition | ResourceTemplateDefinition<unknown>, params: unknown, request?: RequestInfo): Promise<ResourceReadResult>;
  /**
   * Definitions this runtime may have to run without a request naming them — a task taken over
   * from an instance that died. `register` tells it; call it yourself without `register`.
   */
  define(defs: readonly Definition[]): void;
  /** `tasks/get`: the task with its per-status fields. */
  getTask(params: unknown, request?: RequestInfo): Promise<GetTaskResult>;
  /** `tasks/update`: answers for the task's outstanding asks (others are ignored). */
  updateTask(params: unknown, request?: RequestInfo): Promise<TaskAck>;
  /** `tasks/cancel`: cooperative — `ctx.signal` aborts; the task ends `cancelled` within the cancel grace. */
  cancelTask(params: unknown, request?: RequestInfo): Promise<TaskAck>;
  /** Settles once every task run this instance started has ended (tests, graceful shutdown). */
  idle(): Promise<void>;
  /** Stop background work: task runs in progress release their lease for another instance. */
  close(): Promise<void>;
}

const invalidParams = (message: string, reason: string, extra?: Record<string, unknown>) =>
  new ProtocolError(ErrorCode.InvalidParams, message, { reason, ...extra });

function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw invalidParams(`Invalid ${what}: ${describeZodError(parsed.error)}`, "invalid_params");
  return parsed.data;
}

/** One call's shared parts, whatever the method. */
interface CallSpec<R, T = never> {
  /** The definition being run (live generators are only resumed under the same one). */
  owner: object;
  binding: StateBinding;
  version: string | undefined;
  requestState: string | undefined;
  inputResponses: Record<string, unknown> | undefined;
  start: (ctx: RunContext) => RunGenerator<unknown>;
  /** Turn the completed value into the method's result (throws ResultShapeError). */
  shape: (value: unknown) => R;
  /** What an author failure becomes: an isError tool result, or a JSON-RPC internal error. */
  onAuthorFailure: () => R;
  /** Set when the call may become a task at `runAsTask()`: hands it over to the task engine. */
  becomeTask?: (handover: { journal: JournalRecord[]; message: string | undefined; callId: string; resume: { suspended: Suspended; context: CallContext } }) => Promise<T>;
}

// Arguments digests by canonical text: every round of a call presents the same arguments, and
// hashing them measured ≈ 0.7 µs of each round against ≈ 0.05 µs for the lookup. Only short
// texts are kept (bounded memory); the canonical text is computed every round all the same.
const digests = new Map<string, string>();
const DIGESTS_KEPT = 1024;
const DIGEST_TEXT_KEPT = 1024;

function argumentsDigest(args: Record<string, unknown>): string {
  const text = canonicalJson(args);
  if (text.length > DIGEST_TEXT_KEPT) return digestOfText(text);
  let digest = digests.get(text);
  if (digest === undefined) {
    if (digests.size >= DIGESTS_KEPT) digests.clear();
    digests.set(text, (digest = digestOfText(text)));
  }
  return digest;
}

/** The call a state belongs to; the arguments digest is computed once for open and seal. */
function bindingFor(method: StateBinding["method"], target: string, args: Record<string, unknown>, principal: string | undefined): StateBinding {
  const binding: StateBinding = { method, target, arguments: args, argumentsDigest: argumentsDigest(args) };
  if (principal !== undefined) binding.principal = principal;
  return binding;
}

const PAYLOAD_LIMIT_REASON = "state_too_large";

/** What kind of response a stored one is, for its trace. */
function outcomeOf(result: unknown): RoundTrace["outcome"] {
  const kind = (result as { resultType?: unknown }).resultType;
  return kind === "input_required" ? "input_required" : kind === "task" ? "task" : "complete";
}

/** A presented state, verified: by exact match with a token this instance holds, or in full (`opened`). */
interface Presented {
  token: string;
  nonce: string;
  expiresAt: number;
  opened?: OpenedState<unknown>;
}

/** A store failure, as the JSON-RPC error a client gets: a server-side problem, clearly named. */
function storeFailure(error: StoreError): ProtocolError {
  return new ProtocolError(ErrorCode.InternalError, error.reason === "store_full" ? "The server's store is full; try again later" : "The server's store is unavailable; try again later", { reason: error.reason });
}

/** `-32021` for a request that did not declare the tasks extension. */
function tasksNotDeclared(what: string, noEnvelope = false): ProtocolError {
  return new ProtocolError(
    ErrorCode.MissingClientCapability,
    `${what} needs the tasks extension, which this request did not declare: add extensions["${TASKS_EXTENSION}"] = {} to its clientCapabilities${noEnvelope ? ` (${NO_ENVELOPE_HINT})` : ""}`,
    { requiredCapabilities: TASKS_REQUIRED_CAPABILITIES },
  );
}

/** Errors nobody handled are still seen: the definition, round and stack on stderr. */
function logError(error: unknown, info: ErrorInfo): void {
  console.error(`[mcp-yield] ${info.method} ${info.target}, round ${info.round} (call ${info.callId}):`, error);
}

/** JSON text, or `undefined` where it is not JSON (a stored format-1 journal is checked after). */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

const count = integerOption;

/** Create the framework-free runtime: one method per multi-round-trip request kind. */
export function createRuntime(options: RuntimeOptions): Runtime {
  const codec: StateCodec = "seal" in options.state ? options.state : createStateCodec(options.state);
  const given = options.limits ?? {};
  const limits: Required<RuntimeLimits> = {
    maxRounds: count("limits.maxRounds", given.maxRounds, 64, 1),
    maxInputResponses: count("limits.maxInputResponses", given.maxInputResponses, 64, 1),
    maxInputResponseBytes: count("limits.maxInputResponseBytes", given.maxInputResponseBytes, 256 * 1024, 1),
    maxInputResponseDepth: count("limits.maxInputResponseDepth", given.maxInputResponseDepth, 32, 1),
    maxArgumentBytes: count("limits.maxArgumentBytes", given.maxArgumentBytes, 1024 * 1024, 1),
    maxArgumentDepth: count("limits.maxArgumentDepth", given.maxArgumentDepth, 64, 1),
  };
  const clock = options.clock ?? Date.now;
  // Expiry of held tokens is measured on the codec's clock, as the tokens' own expiry is.
  const live = new LiveCalls(count("liveCalls", options.liveCalls, 1000, 0), count("liveCallBytes", options.liveCallBytes, 16 * 1024 * 1024, 0), () => codec.now());
  const onError = options.onError ?? logError;
  const report = (error: unknown, info: ErrorInfo) => {
    try {
      onError(error, info);
    } catch {
      // a failing error hook must not turn a handled failure into a crash
    }
  };
  let engine: TaskEngine | undefined;
  /** The task engine, made on first use (a runtime that never runs a task starts no timer). */
  const tasks = () => (engine ??= createTaskEngine({ store: options.store ?? createMemoryStore(), options: options.tasks ?? {}, report, clock }));
  const redemption = options.store !== undefined && options.singleUse !== false ? createRedemption({ store: options.store, clock, report: (e) => report(e, { method: "tools/call", target: "", round: 0, callId: "" }) }) : undefined;
  const spill = createSpill({ store: options.store, thresholdBytes: count("spillBytes", options.spillBytes, 16 * 1024, 1), ttlMs: codec.ttlSeconds * 1000 });
  /** Store failures become a clear JSON-RPC error instead of escaping as an internal one. */
  async function storeSafe<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof StoreError) throw storeFailure(error);
      throw error;
    }
  }

  /** Verify the token (integrity, expiry, binding); its data is not trusted as a journal yet. */
  function verifyState(token: string, binding: StateBinding): OpenedState<unknown> {
    try {
      return codec.open(token, binding);
    } catch (error) {
      if (error instanceof StateError) throw invalidParams(`Invalid requestState: ${error.message}`, error.reason);
      throw error;
    }
  }

  /**
   * The journal a verified state carries (in its body, or spilled to the store): shape and
   * version checked. A state minted before the line format (format 1) is read as such.
   */
  function payloadOf(opened: OpenedState<unknown>, version: string | undefined): StatePayload | Promise<StatePayload> {
    const ref = spill.refOf(opened.data);
    // Synchronous unless the journal was spilled to the store.
    if (ref === undefined) return checkedPayload(opened.format === 2 ? linesPayload(opened.data, opened.body ?? "") : parsePayloadV1(opened.data), version);
    return storeSafe(() => spill.open(ref)).then((text) => checkedPayload(opened.format === 2 ? linesPayload(opened.data, text) : parsePayloadV1(parseJson(text)), version));
  }

  /** A format-2 payload: the header from the sealed data, the records from the lines. */
  function linesPayload(data: unknown, text: string): StatePayload | undefined {
    const header = parseHeader(data);
    const j = header && parseLines(text);
    return header && j ? payloadFrom(header, j, text, 2) : undefined;
  }

  function checkedPayload(payload: StatePayload | undefined, version: string | undefined): StatePayload {
    if (payload === undefined) throw invalidParams("Invalid requestState: payload is not a journal", "malformed");
    if (payload.v !== version) {
      throw new DivergenceError(-1, undefined, undefined, `the definition's version changed from ${JSON.stringify(payload.v ?? null)} to ${JSON.stringify(version ?? null)}`);
    }
    return payload;
  }

  function checkRounds(payload: StatePayload): void {
    if (payload.r >= limits.maxRounds) {
      throw invalidParams(`This call has taken ${payload.r} rounds, the server's limit; start it again`, "too_many_rounds", { maxRounds: limits.maxRounds });
    }
  }

  /** Arguments are walked (digest, zod) recursively: bound them before anything reads them. */
  function checkArguments(args: unknown): void {
    const over = exceedsJsonLimits(args, limits.maxArgumentBytes, limits.maxArgumentDepth + 1);
    if (over === "size") throw invalidParams(`arguments are larger than the limit of ${limits.maxArgumentBytes} bytes`, "arguments_too_large");
    if (over === "depth") throw invalidParams(`arguments are nested deeper than the limit of ${limits.maxArgumentDepth}`, "arguments_too_deep");
  }

  function ownResponses(raw: Record<string, unknown> | undefined): Map<string, unknown> {
    const map = new Map<string, unknown>();
    if (raw === undefined) return map;
    // Own keys only: an entry keyed "__proto__" must never be read through a prototype chain.
    const keys = Object.keys(raw);
    if (keys.length > limits.maxInputResponses) {
      throw invalidParams(`inputResponses has ${keys.length} entries, more than the limit of ${limits.maxInputResponses}`, "too_many_input_responses");
    }
    // An own member shadows Object.prototype's `__proto__` accessor: reading it is reading the member.
    for (const key of keys) map.set(key, raw[key]);
    // Measured as the object (its own keys count against the byte limit too).
    const over = exceedsJsonLimits(raw, limits.maxInputResponseBytes, limits.maxInputResponseDepth + 1);
    if (over === "size") throw invalidParams(`inputResponses is larger than the limit of ${limits.maxInputResponseBytes} bytes`, "input_responses_too_large");
    if (over === "depth") throw invalidParams(`inputResponses is nested deeper than the limit of ${limits.maxInputResponseDepth}`, "input_responses_too_deep");
    return map;
  }

  /** A result as comparable text, or why shaping it failed (for the double-run). */
  const shapeText = <R, T>(spec: CallSpec<R, T>) => (value: unknown): string => {
    try {
      return canonicalJson(spec.shape(value));
    } catch (error) {
      return `(the result could not be shaped: ${error instanceof Error ? error.message : String(error)})`;
    }
  };

  /**
   * The state a request presents, verified. A token this instance minted and still holds a
   * suspended generator for is recognised by exact match — it is bound to this definition,
   * these arguments and this principal and has not expired — and needs no decoding; any other
   * token is verified in full (integrity, expiry, binding). Every part of the binding is
   * compared: one definition may serve many targets (a resource template, many uris).
   */
  function presented<R, T>(spec: CallSpec<R, T>, token: string): Presented {
    const held = live.peek(token);
    const minted = held?.minted;
    if (
      held !== undefined &&
      minted !== undefined &&
      held.owner === spec.owner &&
      minted.method === spec.binding.method &&
      minted.target === spec.binding.target &&
      minted.expiresAt > codec.now() &&
      minted.argumentsDigest === spec.binding.argumentsDigest &&
      minted.principal === spec.binding.principal
    ) {
      return { token, nonce: minted.nonce, expiresAt: minted.expiresAt };
    }
    const opened = verifyState(token, spec.binding);
    return { token, nonce: opened.nonce, expiresAt: opened.expiresAt, opened };
  }

  /**
   * One round. With a store, the state it presents is redeemed once: the same request again
   * gets this round's response from the store, a different one is refused (`state_redeemed`).
   */
  function run<R, T = never>(spec: CallSpec<R, T>, request: RequestInfo): Promise<R | InputRequiredResult | T> {
    // Not async itself: each async layer a round passes through costs a promise and microtask
    // hops, measured on the resume path. Callers are async, so a throw here still rejects.
    const observe = options.onRound;
    if (observe === undefined) return runRound(spec, request, undefined);
    return runObserved(spec, request, observe);
  }

  async function runObserved<R, T>(spec: CallSpec<R, T>, request: RequestInfo, observe: (trace: RoundTrace) => void): Promise<R | InputRequiredResult | T> {
    const trace: RoundTrace = {
      method: spec.binding.method,
      target: spec.binding.target,
      callId: undefined,
      round: 0,
      path: spec.requestState === undefined ? "first" : "replayed",
      replayed: 0,
      steps: [],
      asks: [],
      stateBytesIn: spec.requestState?.length ?? 0,
      stateBytesOut: 0,
      startedAt: Date.now(),
      ms: 0,
      outcome: "error",
    };
    const started = performance.now();
    try {
      return await runRound(spec, request, trace);
    } catch (error) {
      trace.outcome = "error";
      trace.error = error instanceof ProtocolError ? { code: error.code, reason: String(error.data?.reason ?? "") } : { code: undefined, reason: error instanceof Error ? error.name : "thrown" };
      throw error;
    } finally {
      trace.ms = performance.now() - started;
      try {
        observe(trace);
      } catch {
        // an observer that throws must not change the round's response
      }
    }
  }

  function runRound<R, T>(spec: CallSpec<R, T>, request: RequestInfo, observed: RoundTrace | undefined): Promise<R | InputRequiredResult | T> {
    const responses = ownResponses(spec.inputResponses);
    if (spec.requestState === undefined) return execute(spec, request, undefined, responses, observed);
    const state = presented(spec, spec.requestState);
    if (redemption === undefined) return execute(spec, request, state, responses, observed);
    return redeemed(spec, request, state, responses, observed, redemption);
  }

  /** A round whose state is redeemed once in the store (see `run`). */
  async function redeemed<R, T>(spec: CallSpec<R, T>, request: RequestInfo, state: Presented, responses: Map<string, unknown>, observed: RoundTrace | undefined, redemption: Redemption): Promise<R | InputRequiredResult | T> {
    const ticket = await storeSafe(() => redemption.claim(state.nonce, digestOf(Object.fromEntries(responses)), state.expiresAt));
    if (ticket.kind === "stored") {
      if (observed) observed.path = "stored";
      if ("error" in ticket.response) throw new ProtocolError(ticket.response.error.code, ticket.response.error.message, ticket.response.error.data);
      const stored = ticket.response.result as R | InputRequiredResult | T;
      if (observed) observed.outcome = outcomeOf(stored);
      return stored;
    }
    let result: R | InputRequiredResult | T;
    try {
      result = await execute(spec, request, state, responses, observed);
    } catch (error) {
      // A JSON-RPC error is this round's response too; anything else frees the state for a retry.
      const kept = error instanceof ProtocolError && !["store_unavailable", "store_full"].includes(String(error.data?.reason));
      await (kept ? ticket.finish({ error: error.toJSON() }) : ticket.release()).catch((e: unknown) => report(e, infoFor(spec)));
      throw error;
    }
    // The round ran; if its response cannot be kept now, the client still gets it (and the
    // store's failure is reported: a repeat of this round may then run it again).
    await ticket.finish({ result }).catch((e: unknown) => report(e, infoFor(spec)));
    return result;
  }

  const infoFor = (spec: CallSpec<unknown, unknown>): ErrorInfo => ({ method: spec.binding.method, target: spec.binding.target, round: 0, callId: "" });

  /** Mint the state of a call that waits for input: the header in the token, the journal as its body (or spilled). */
  function mintState(binding: StateBinding, header: StateHeader, text: string, info: ErrorInfo): MintedState | Promise<MintedState> {
    // Synchronous unless the journal goes to the store.
    if (!spill.spills(text)) return mintSealed(binding, header, undefined, text, info);
    return storeSafe(() => spill.seal(text)).then(({ ref, body }) => mintSealed(binding, header, ref, body, info));
  }

  function mintSealed(binding: StateBinding, header: StateHeader, ref: SpillRef | undefined, body: string, info: ErrorInfo): MintedState {
    try {
      return codec.mint({ binding, data: ref === undefined ? header : { ...header, ...ref }, body });
    } catch (error) {
      report(error, info);
      if (error instanceof StateError) {
        throw new ProtocolError(ErrorCode.InternalError, "The call's state grew past the server's size limit", { reason: PAYLOAD_LIMIT_REASON });
      }
      throw error;
    }
  }

  async function execute<R, T>(spec: CallSpec<R, T>, request: RequestInfo, state: Presented | undefined, responses: Map<string, unknown>, observed: RoundTrace | undefined): Promise<R | InputRequiredResult | T> {
    let payload: StatePayload | undefined;
    let resumed: LiveCall | undefined;
    if (state !== undefined) {
      // Only after the token verified, bound to this call: resume this instance's suspended
      // generator. Its journal is the very one that was sealed into this token, so nothing is
      // decoded; otherwise (another instance's token, or a parallel round took the generator)
      // the journal comes out of the verified token.
      resumed = live.take(state.token, spec.owner);
      if (resumed) payload = resumed.payload;
      else {
        const reading = payloadOf(state.opened ?? verifyState(state.token, spec.binding), spec.version);
        payload = reading instanceof Promise ? await reading : reading;
      }
      checkRounds(payload);
    }
    const round = (payload?.r ?? 0) + 1;
    const callId = payload?.c ?? randomUuid();
    const info: ErrorInfo = { method: spec.binding.method, target: spec.binding.target, round, callId };
    if (observed) {
      observed.callId = callId;
      observed.round = round;
      observed.path = resumed ? "resumed" : state ? "replayed" : "first";
      observed.replayed = resumed ? 0 : (payload?.j.length ?? 0);
    }
    const ctx = resumed?.context ?? new CallContext(spec.binding.principal, callId);
    const declared = capabilityCheck(request.clientCapabilities);
    const trace = options.verifyReplay ? new Map<number, Traced>() : undefined;
    // Records carried in as lines (format 2) are not written again: the new ones are appended.
    const carried = payload?.format === 2 ? payload.j.length : 0;
    const current = new Round(
      {
        start: () => spec.start(ctx),
        journal: payload?.j ?? [],
        format: payload?.format ?? 2,
        outstanding: payload?.o,
        partial: payload?.p ?? {},
        responses,
        declared,
        undeclared: request.clientCapabilities === undefined,
        signal: () => ctx.signal,
        randomUUID: randomUuid,
        clock,
        task: spec.becomeTask ? "become" : "foreground",
        trace,
      },
      resumed?.suspended,
    );
    ctx.enter(current, request.signal);
    let outcome: RoundOutcome;
    try {
      outcome = await current.run();
    } catch (error) {
      // Author code that throws a ProtocolError asks for exactly that JSON-RPC error.
      if (error instanceof AuthorCodeError && error.cause instanceof ProtocolError) throw error.cause;
      if (error instanceof AuthorCodeError) {
        report(error.cause, info);
        if (observed) observed.outcome = "author_error";
        return spec.onAuthorFailure();
      }
      if (error instanceof DivergenceError) report(error, info);
      throw error;
    } finally {
      ctx.leave();
      if (observed) observed.steps = current.stepsRun;
    }
    if (observed) observed.outcome = outcome.type;
    if (outcome.type === "task") {
      return storeSafe(() => spec.becomeTask!({ journal: outcome.journal, message: outcome.message, callId, resume: { suspended: outcome.suspended, context: ctx } }));
    }
    const check = trace && { round, start: spec.start, principal: spec.binding.principal, callId, declared, trace };
    if (outcome.type === "complete") {
      let result: R;
      try {
        result = spec.shape(outcome.value);
      } catch (error) {
        if (!(error instanceof ResultShapeError)) throw error;
        report(error, info);
        if (observed) observed.outcome = "author_error";
        return spec.onAuthorFailure();
      }
      if (check) await checked(checkReplay(check, { type: "complete", journal: outcome.journal, result: canonicalJson(result) }, shapeText(spec)), info);
      return result;
    }
    const header: StateHeader = { r: round, c: callId, o: outcome.outstanding };
    if (spec.version !== undefined) header.v = spec.version;
    if (outcome.partial !== undefined) header.p = outcome.partial;
    const text = (carried > 0 ? payload!.text : "") + recordLines(outcome.journal, carried);
    const minting = mintState(spec.binding, header, text, info);
    const minted = minting instanceof Promise ? await minting : minting;
    const requestState = minted.token;
    if (check) {
      // Replay from the sealed state itself, decoded as another instance would decode it.
      const reopened = await payloadOf(verifyState(requestState, spec.binding), spec.version);
      const expected = { type: "input_required" as const, journal: reopened.j, outstanding: reopened.o, partial: reopened.p ?? {}, pending: outcome.suspended.pending!.fp, inputRequests: canonicalJson(outcome.inputRequests) };
      await checked(checkReplay(check, expected, shapeText(spec)), info);
    }
    // A call whose signal fired is not resumed: its next round replays with a fresh one.
    if (!ctx.callSignal.aborted) {
      live.put(
        requestState,
        {
          suspended: outcome.suspended,
          context: ctx,
          owner: spec.owner,
          payload: payloadFrom(header, outcome.journal, text, 2),
          minted: { nonce: minted.nonce, expiresAt: minted.expiresAt, method: spec.binding.method, target: spec.binding.target, argumentsDigest: spec.binding.argumentsDigest!, principal: spec.binding.principal },
        },
        minted.expiresAt,
      );
    }
    if (observed) {
      observed.asks = Object.entries(outcome.inputRequests).map(([key, r]) => ({ key, method: r.method }));
      observed.stateBytesOut = requestState.length;
    }
    return { resultType: "input_required", inputRequests: outcome.inputRequests, requestState };
  }

  /** A failed double-run is a server-side fault: reported, then the round's error. */
  async function checked(verification: Promise<void>, info: ErrorInfo): Promise<void> {
    try {
      await verification;
    } catch (error) {
      if (error instanceof NondeterminismError) report(error, info);
      throw error;
    }
  }

  const internalError = () => {
    throw new ProtocolError(ErrorCode.InternalError, "Internal error", { reason: "internal_error" });
  };

  return {
    codec,
    limits,
    async callTool(def, rawParams, request = {}) {
      const params = plainCallToolParams(rawParams) ?? parseOrThrow(callToolParams, rawParams, "tools/call params");
      if (params.name !== def.name) throw invalidParams(`Tool name "${params.name}" does not match "${def.name}"`, "invalid_params");
      const args = params.arguments ?? {};
      checkArguments(args);
      const input = def.input.safeParse(args);
      if (!input.success) throw invalidParams(`Invalid arguments for tool ${def.name}: ${describeZodError(input.error, "arguments")}`, "invalid_arguments");
      // A task only when this request declared the extension; a tool that needs one refuses others.
      const declared = declaresExtension(request.clientCapabilities, TASKS_EXTENSION);
      if (def.task === "required" && !declared) throw tasksNotDeclared(`Tool "${def.name}" runs only as a task and`, request.clientCapabilities === undefined);
      const asTask = def.task !== "never" && declared;
      const startTask = (from: { journal: JournalRecord[]; callId: string; message?: string | undefined; resume?: { suspended: Suspended; context: CallContext } }) =>
        tasks().start({ def, args, principal: request.principal, caps: request.clientCapabilities, journal: from.journal, callId: from.callId, ...(from.message !== undefined ? { message: from.message } : {}), ...(from.resume ? { resume: from.resume } : {}) });
      // A task from its start: the first request already answers with the task.
      if (asTask && def.taskFrom === "start" && params.requestState === undefined) return storeSafe(() => startTask({ journal: [], callId: randomUuid() }));
      return run<CallToolResult, CreateTaskResult>(
        {
          owner: def,
          binding: bindingFor("tools/call", def.name, args, request.principal),
          version: def.version,
          requestState: params.requestState,
          inputResponses: params.inputResponses,
          start: (ctx) => def.run(input.data, ctx),
          shape: (value) => shapeToolResult(def, value),
          onAuthorFailure: () => errorToolResult(`Tool "${def.name}" failed; the error was reported to the server.`),
          ...(asTask && def.taskFrom === "runAsTask" ? { becomeTask: startTask } : {}),
        },
        request,
      );
    },
    async getPrompt(def, rawParams, request = {}) {
      const params = plainGetPromptParams(rawParams) ?? parseOrThrow(getPromptParams, rawParams, "prompts/get params");
      if (params.name !== def.name) throw invalidParams(`Prompt name "${params.name}" does not match "${def.name}"`, "invalid_params");
      const args = params.arguments ?? {};
      checkArguments(args);
      const missing = def.arguments.filter((a) => a.required && !Object.hasOwn(args, a.name)).map((a) => a.name);
      if (missing.length > 0) throw invalidParams(`Missing required prompt arguments: ${missing.join(", ")}`, "invalid_arguments");
      return run<GetPromptResult>(
        {
          owner: def,
          binding: bindingFor("prompts/get", def.name, args, request.principal),
          version: def.version,
          requestState: params.requestState,
          inputResponses: params.inputResponses,
          start: (ctx) => def.run(args, ctx),
          shape: (value) => shapePromptResult(def, value),
          onAuthorFailure: internalError,
        },
        request,
      );
    },
    async readResource(def, rawParams, request = {}) {
      const params = plainReadResourceParams(rawParams) ?? parseOrThrow(readResourceParams, rawParams, "resources/read params");
      const uri = params.uri;
      let start: (ctx: RunContext) => RunGenerator<unknown>;
      if (def.type === "resource") {
        if (uri !== def.uri) throw invalidParams(`Resource uri "${uri}" does not match "${def.uri}"`, "invalid_params");
        start = (ctx) => def.run(uri, ctx);
      } else {
        // A template: the state is bound to the concrete uri, so a round never moves to another.
        const matched = def.match(uri);
        if (matched === undefined) throw invalidParams(`Resource uri "${uri}" does not match the template "${def.uriTemplate}"`, "invalid_params");
        if (!matched.ok) throw invalidParams(`Invalid variables in resource uri "${uri}": ${matched.problem}`, "invalid_arguments");
        start = (ctx) => def.run(matched.variables, uri, ctx);
      }
      return run<ReadResourceResult>(
        {
          owner: def,
          binding: bindingFor("resources/read", uri, {}, request.principal),
          version: def.version,
          requestState: params.requestState,
          inputResponses: params.inputResponses,
          start,
          shape: (value) => shapeResourceResult(def, uri, value),
          onAuthorFailure: internalError,
        },
        request,
      );
    },
    define(defs) {
      tasks().define(defs.filter((d): d is ToolDefinition => d.type === "tool"));
    },
    async getTask(rawParams, request = {}) {
      // The capability gate comes before the task id is even looked up.
      if (!declaresExtension(request.clientCapabilities, TASKS_EXTENSION)) throw tasksNotDeclared("tasks/get");
      const { taskId } = parseOrThrow(taskIdParams, rawParams, "tasks/get params");
      return storeSafe(() => tasks().get(taskId, request.principal));
    },
    async updateTask(rawParams, request = {}) {
      if (!declaresExtension(request.clientCapabilities, TASKS_EXTENSION)) throw tasksNotDeclared("tasks/update");
      const { taskId, inputResponses } = parseOrThrow(updateTaskParams, rawParams, "tasks/update params");
      const responses = ownResponses(inputResponses);
      await storeSafe(() => tasks().update(taskId, responses, request.principal));
      return { resultType: "complete" };
    },
    async cancelTask(rawParams, request = {}) {
      if (!declaresExtension(request.clientCapabilities, TASKS_EXTENSION)) throw tasksNotDeclared("tasks/cancel");
      const { taskId } = parseOrThrow(taskIdParams, rawParams, "tasks/cancel params");
      await storeSafe(() => tasks().cancel(taskId, request.principal));
      return { resultType: "complete" };
    },
    async idle() {
      await engine?.idle();
    },
    async close() {
      await engine?.close();
    },
  };
}
