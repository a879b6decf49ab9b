import type { z } from "zod";
import { createStateCodec, randomUuid, type StateCodec } from "../state/index.js";
import { createMemoryStore, createPrincipalBytes, createStoreClock, creditedBytes, monotonicNow } from "../store/index.js";
import { reportingStore } from "../store/reported.js";
import type { Definition, PromptDefinition, ResourceDefinition, ResourceTemplateDefinition, RunContext, RunGenerator, ToolDefinition } from "../authoring/definitions.js";
import { errorToolResult, shapePromptResult, shapeResourceResult, shapeToolResult } from "../authoring/results.js";
import type { JournalRecord } from "../journal/journal.js";
import type { CallContext } from "../replay/call-context.js";
import { authorFailureText, type ErrorInfo } from "../replay/errors.js";
import { LiveCalls } from "../replay/live-calls.js";
import type { Suspended } from "../replay/round/round.js";
import { tracedTaskStart } from "../replay/round-trace.js";
import { createTaskEngine } from "../tasks/engine.js";
import type { TaskEngine } from "../tasks/types.js";
import type { SignalDelivered } from "../tasks/signals.js";
import type { TaskWatchHandle, TaskWatchSink } from "../tasks/watch.js";
import {
  type CallToolResult,
  callToolParams,
  declaresExtension,
  describeZodError,
  ErrorCode,
  type GetPromptResult,
  getPromptParams,
  type GetTaskResult,
  ProtocolError,
  type ReadResourceResult,
  readResourceParams,
  TASKS_EXTENSION,
  taskIdParams,
  listenTaskParams,
  updateTaskParams,
  type CreateTaskResult,
} from "../wire/index.js";
import { plainCallToolParams, plainGetPromptParams, plainReadResourceParams } from "../wire/plain-params.js";
import { bindingFor, checkArguments, invalidParams, ownResponses, parseOrThrow, storeSafe, tasksNotDeclared } from "./admission.js";
import { createCallState } from "./call-state.js";
import { type PromptGetResult, type RequestInfo, type ResourceReadResult, resolveRuntimeOptions, type RuntimeLimits, type RuntimeOptions, type TaskAck, type ToolCallResult } from "./options.js";
import { createRedemption } from "./single-use/redeem.js";
import { createRoundHost } from "./serve-round.js";
import { createSpill } from "./spill.js";
import { clientIdempotencyKey, derivedIdempotencyKey, idempotencyGuard, startTaskOnce } from "./single-use/idempotency.js";
import { TOLERATED_CLOCK_SKEW_MS } from "./single-use/skew.js";
import { roundShareOf } from "./single-use/round-share.js";

export type { ErrorInfo } from "../replay/errors.js";
export type { PromptGetResult, RequestInfo, ResourceReadResult, RuntimeLimits, RuntimeOptions, TaskAck, ToolCallResult } from "./options.js";

/**
 * `createRuntime` wires the parts of a runtime — codec, limits, suspended calls, single use,
 * spill, the task engine — and maps each request kind to one round (`serve-round.ts`).
 * Admission (params, arguments) happens here, per method, before any author code runs.
 */

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
  /**
   * `subscriptions/listen` for `notifications.taskIds`: those the principal owns are acknowledged;
   * after `begin()`, `sink` gets each as `tasks/get` answers it, then at each change, from any
   * instance (tasks/watch.ts). `-32021` without the tasks extension. `withTaskStatus` serves it.
   */
  listenTasks(params: unknown, request: RequestInfo, sink: TaskWatchSink): Promise<TaskWatchHandle>;
  /**
   * Send `value` to the task wait a signal token opens (`ctx.signalToken(name)` made it; a
   * webhook's URL carries it). `{ status: "delivered" }` once the task, waiting there, took the
   * value (it goes on with it, here); `{ status: "accepted" }` when the task has not reached that
   * wait yet: the value is kept in the task (single use) and checked by the wait's schema when
   * the task gets there, on whichever instance. Refused with `-32602` and `data.reason`
   * `signal_invalid_token` (forged, altered, another key ring), `signal_expired` (its task ended
   * or expired), `signal_used` (a value for that wait was taken or is kept, or its wait timed
   * out), `signal_not_waiting` (another value for the wait is still being checked, or the task
   * keeps 64 KiB of early values already: send it again shortly) or `signal_invalid_value` (the
   * journal could not keep it — over 64 KiB, deeper than 32, not plain JSON — or the wait's
   * schema refused it; either way the task waits on and the token stays usable).
   */
  signal(token: string, value: unknown): Promise<SignalDelivered>;
  /** Settles once every task run this instance started has ended (tests, graceful shutdown). */
  idle(): Promise<void>;
  /** Stop background work: task runs in progress release their lease for another instance. */
  close(): Promise<void>;
}

/** Create the framework-free runtime: one method per multi-round-trip request kind. */
export function createRuntime(options: RuntimeOptions): Runtime {
  const codec: StateCodec = "seal" in options.state ? options.state : createStateCodec(options.state);
  const resolved = resolveRuntimeOptions(options, codec.ttlSeconds * 1000);
  const { limits, clock } = resolved;
  // Expiry of held tokens is measured on the codec's clock, as the tokens' own expiry is; how
  // long a generator waited, in generators parked meanwhile (see LiveCalls' constructor).
  const live = new LiveCalls(resolved.liveCalls, resolved.liveCallBytes, () => codec.now());
  const report = reporterOf(resolved.onError);
  let engine: TaskEngine | undefined;
  // A shared store's failures reach onError (a request only hears "unavailable, try again").
  const given = options.store !== undefined && options.store.time !== undefined ? reportingStore(options.store, (e) => report(e, STORE_INFO), clock) : options.store;
  const store = given ?? createMemoryStore();
  // Leases and claims are judged on the store's clock, advanced by a monotonic one (or the test's).
  const shared = createStoreClock({ store, local: options.clock ?? monotonicNow });
  // Counted over the longest life of what is counted: a task, or a spilled journal (the state's).
  // A credit at a time (store/principal-bytes.ts): 64 KiB, or a sixteenth of a smaller share.
  const counted = createPrincipalBytes({ store, time: shared, limit: resolved.maxStoreBytesPerPrincipal, windowMs: resolved.principalWindowMs });
  const creditBytes = Math.max(1, Math.min(64 * 1024, Math.floor(resolved.maxStoreBytesPerPrincipal / 16)));
  const bytes = resolved.maxStoreBytesPerPrincipal === 0 ? counted : creditedBytes(counted, { time: shared, windowMs: resolved.principalWindowMs, creditBytes });
  const signalBaseUrl = options.signals?.baseUrl;
  if (signalBaseUrl !== undefined && (typeof signalBaseUrl !== "string" || !/^https?:\/\/\S+$/.test(signalBaseUrl)))
    throw new TypeError(`signals.baseUrl must be an http(s) URL the token is appended to, got ${JSON.stringify(signalBaseUrl)}`);
  /** The task engine, made on first use (a runtime that never runs a task starts no timer). */
  const tasks = () => (engine ??= createTaskEngine({ store, options: resolved.tasks, report, clock, time: shared, bytes, signer: codec, signalBaseUrl, onRound: options.onRound }));
  const redemption =
    given !== undefined && resolved.singleUse
      ? createRedemption({ store: given!, clock, shared, claimMs: resolved.roundLeaseMs, report: (e) => report(e, { method: "tools/call", target: "", round: 0, callId: "" }) })
      : undefined;
  // A spilled journal outlives its state by the skew margin: a slow-clocked instance still finds it.
  const spill = createSpill({ store: given, bytes, thresholdBytes: resolved.spillBytes, ttlMs: codec.ttlSeconds * 1000 + TOLERATED_CLOCK_SKEW_MS });
  const calls = createCallState({ codec, spill, live, report });
  // First requests with an idempotency key are redeemed in the store (the in-memory one without
  // a store of the server's: one instance), kept as long as their state or task may live.
  const keepMs = Math.max(codec.ttlSeconds * 1000, resolved.tasks.ttlMs);
  const idempotency = {
    redemption: redemption ?? createRedemption({ store, clock, shared, claimMs: resolved.roundLeaseMs, report: (e) => report(e, { method: "tools/call", target: "", round: 0, callId: "" }) }),
    keepMs,
    share: roundShareOf(store, shared, resolved.maxStoreBytesPerPrincipal, keepMs, "principal-key-bytes"),
  };
  const share = redemption && roundShareOf(store, shared, resolved.maxStoreBytesPerPrincipal, codec.ttlSeconds * 1000, "principal-round-bytes");
  const run = createRoundHost({ limits, calls, live, redemption, share, idempotency, clock, report, onRound: options.onRound, verifyReplay: resolved.verifyReplay });

  /** The request that starts a task from its first round, traced as that round (its runs are traced by the engine). */
  const traceTaskStart = (tool: string, callId: string, start: () => Promise<CreateTaskResult>) => tracedTaskStart(options.onRound, tool, callId, start);

  const internalError = () => {
    throw new ProtocolError(ErrorCode.InternalError, "Internal error", { reason: "internal_error" });
  };

  function toolRound(def: ToolDefinition, rawParams: unknown, request: RequestInfo): Promise<ToolCallResult> {
    const params = plainCallToolParams(rawParams) ?? parseOrThrow(callToolParams, rawParams, "tools/call params");
    if (params.name !== def.name) throw invalidParams(`Tool name "${params.name}" does not match "${def.name}"`, "invalid_params");
    const args = params.arguments ?? {};
    const argumentBytes = checkArguments(args, limits);
    const input = def.input.safeParse(args);
    if (!input.success) throw invalidParams(`Invalid arguments for tool ${def.name}: ${describeZodError(input.error, "arguments")}`, "invalid_arguments");
    // A task only when this request declared the extension; a tool that needs one refuses others.
    const declared = declaresExtension(request.clientCapabilities, TASKS_EXTENSION);
    if (def.task === "required" && !declared) throw tasksNotDeclared(`Tool "${def.name}" runs only as a task and`, request.clientCapabilities === undefined);
    const asTask = def.task !== "never" && declared;
    const startTask = (from: { journal: JournalRecord[]; callId: string; taskId?: string; message?: string | undefined; resume?: { suspended: Suspended; context: CallContext } }) =>
      tasks().start({
        def,
        args,
        input: input.data,
        principal: request.principal,
        caps: request.clientCapabilities,
        journal: from.journal,
        callId: from.callId,
        ...(from.taskId !== undefined ? { taskId: from.taskId } : {}),
        ...(from.message !== undefined ? { message: from.message } : {}),
        ...(from.resume ? { resume: from.resume } : {}),
      });
    const binding = bindingFor("tools/call", def.name, args, request.principal);
    // A first request's idempotency key: the client's, else the one the tool derives.
    const derive = def.idempotencyKey;
    const idempotencyKey =
      params.requestState !== undefined ? undefined : (clientIdempotencyKey(params._meta) ?? (derive && derivedIdempotencyKey(() => derive(input.data, { principal: request.principal }), def.name)));
    // A task from its start: the first request already answers with the task.
    if (asTask && def.taskFrom === "start" && params.requestState === undefined) {
      if (idempotencyKey !== undefined) {
        const guard = idempotencyGuard(binding, idempotencyKey, ownResponses(params.inputResponses, limits), clock, idempotency.keepMs);
        return traceTaskStart(def.name, guard.nonce, () =>
          startTaskOnce(
            idempotency.redemption,
            guard,
            ({ callId, taskId }) => storeSafe(() => startTask({ journal: [], callId, taskId })),
            (e) => report(e, { method: "tools/call", target: def.name, round: 1, callId: "" }),
          ),
        );
      }
      const callId = randomUuid();
      return traceTaskStart(def.name, callId, () => storeSafe(() => startTask({ journal: [], callId })));
    }
    return run<CallToolResult, CreateTaskResult>(
      {
        owner: def,
        definition: def.name,
        binding,
        code: def,
        requestState: params.requestState,
        idempotencyKey,
        argumentBytes,
        inputResponses: params.inputResponses,
        start: (ctx) => def.run(input.data, ctx),
        shape: (value) => shapeToolResult(def, value),
        onAuthorFailure: () => errorToolResult(authorFailureText("Tool", def.name)),
        ...(asTask && def.taskFrom === "runAsTask" ? { becomeTask: startTask } : {}),
      },
      request,
    );
  }

  function promptRound(def: PromptDefinition, rawParams: unknown, request: RequestInfo): Promise<PromptGetResult> {
    const params = plainGetPromptParams(rawParams) ?? parseOrThrow(getPromptParams, rawParams, "prompts/get params");
    if (params.name !== def.name) throw invalidParams(`Prompt name "${params.name}" does not match "${def.name}"`, "invalid_params");
    const args = params.arguments ?? {};
    const argumentBytes = checkArguments(args, limits);
    const missing = def.arguments.filter((a) => a.required && !Object.hasOwn(args, a.name)).map((a) => a.name);
    if (missing.length > 0) throw invalidParams(`Missing required prompt arguments: ${missing.join(", ")}`, "invalid_arguments");
    return run<GetPromptResult>(
      {
        owner: def,
        definition: def.name,
        binding: bindingFor("prompts/get", def.name, args, request.principal),
        code: def,
        requestState: params.requestState,
        idempotencyKey: params.requestState === undefined ? clientIdempotencyKey(params._meta) : undefined,
        argumentBytes,
        inputResponses: params.inputResponses,
        start: (ctx) => def.run(args, ctx),
        shape: (value) => shapePromptResult(def, value),
        onAuthorFailure: internalError,
      },
      request,
    );
  }

  function resourceRound(def: ResourceDefinition | ResourceTemplateDefinition<unknown>, rawParams: unknown, request: RequestInfo): Promise<ResourceReadResult> {
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
        definition: def.type === "resource" ? def.uri : def.uriTemplate,
        binding: bindingFor("resources/read", uri, {}, request.principal),
        code: def,
        requestState: params.requestState,
        idempotencyKey: params.requestState === undefined ? clientIdempotencyKey(params._meta) : undefined,
        inputResponses: params.inputResponses,
        start,
        shape: (value) => shapeResourceResult(def, uri, value),
        onAuthorFailure: internalError,
      },
      request,
    );
  }

  /** A tasks request (or a listen for task status): the capability gate before the params are even read, then the engine. */
  const taskRequest =
    <S extends z.ZodType, R>(method: string, schema: S, act: (params: z.output<S>, principal: string | undefined) => Promise<R>, gated = method) =>
    async (rawParams: unknown, request: RequestInfo = {}): Promise<R> => {
      if (!declaresExtension(request.clientCapabilities, TASKS_EXTENSION)) throw tasksNotDeclared(gated);
      const params = parseOrThrow(schema, rawParams, `${method} params`);
      return storeSafe(() => act(params, request.principal));
    };

  return {
    codec,
    limits,
    // Not async functions: one promise and microtask hop less per request (an async layer
    // measured ≈ 500 instructions in isolation; a request is ≈ 85,000). A throw in a round's
    // checks is still the returned promise's rejection (rejecting), never a synchronous throw.
    callTool: (def, rawParams, request = {}) => rejecting(toolRound, def, rawParams, request),
    getPrompt: (def, rawParams, request = {}) => rejecting(promptRound, def, rawParams, request),
    readResource: (def, rawParams, request = {}) => rejecting(resourceRound, def, rawParams, request),
    define(defs) {
      tasks().define(defs.filter((d): d is ToolDefinition => d.type === "tool"));
    },
    getTask: taskRequest("tasks/get", taskIdParams, ({ taskId }, principal) => tasks().get(taskId, principal)),
    updateTask: taskRequest("tasks/update", updateTaskParams, async ({ taskId, inputResponses }, principal) => {
      await tasks().update(taskId, ownResponses(inputResponses, limits), principal);
      return ACK;
    }),
    cancelTask: taskRequest("tasks/cancel", taskIdParams, async ({ taskId }, principal) => (await tasks().cancel(taskId, principal), ACK)),
    listenTasks: (rawParams, request, sink) =>
      taskRequest("subscriptions/listen", listenTaskParams, ({ notifications }, principal) => tasks().watch(notifications.taskIds, principal, sink), "notifications/tasks")(rawParams, request),
    async signal(token, value) {
      return storeSafe(() => tasks().signal(token, value));
    },
    async idle() {
      await engine?.idle();
    },
    async close() {
      await engine?.close();
    },
  };
}

/** What `tasks/update` and `tasks/cancel` answer. */
const ACK = { resultType: "complete" } as const;

/** `onError`, made safe: a failing error hook must not turn a handled failure into a crash. */
function reporterOf(onError: (error: unknown, info: ErrorInfo) => void): (error: unknown, info: ErrorInfo) => void {
  return (error, info) => {
    try {
      onError(error, info);
    } catch {
      // swallowed: see above
    }
  };
}

/** Where a store failure is reported from: no one request (the store serves them all). */
const STORE_INFO: ErrorInfo = { method: "tools/call", target: "", round: 0, callId: "" };

/** `round(def, params, request)`'s promise, a synchronous throw in it turned into the rejection. */
function rejecting<D, R>(round: (def: D, params: unknown, request: RequestInfo) => Promise<R>, def: D, params: unknown, request: RequestInfo): Promise<R> {
  try {
    return round(def, params, request);
  } catch (error) {
    return Promise.reject(error);
  }
}
