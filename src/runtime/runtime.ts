import type { z } from "zod";
import { createStateCodec, digestOf, type StateBinding, type StateCodec, type StateCodecOptions, StateError } from "../state/index.js";
import {
  type CallToolResult,
  callToolParams,
  describeZodError,
  ErrorCode,
  type GetPromptResult,
  getPromptParams,
  type InputRequiredResult,
  ProtocolError,
  type ReadResourceResult,
  readResourceParams,
} from "../wire/index.js";
import { CallContext } from "./call-context.js";
import type { PromptDefinition, ResourceDefinition, RunContext, RunGenerator, ToolDefinition } from "./definitions.js";
import { AuthorCodeError, DivergenceError } from "./errors.js";
import { type StatePayload, statePayload } from "./journal.js";
import { type LiveCall, LiveCalls } from "./live-calls.js";
import { exceedsJsonLimits } from "./measure.js";
import { runRound } from "./replay.js";
import { errorToolResult, ResultShapeError, shapePromptResult, shapeResourceResult, shapeToolResult } from "./results.js";

/** What the transport knows about the request, beyond its params. */
export interface RequestInfo {
  /** This request's `io.modelcontextprotocol/clientCapabilities` (never an earlier request's). */
  clientCapabilities?: unknown;
  /** The authenticated principal (e.g. the OAuth subject); the state is bound to it. */
  principal?: string;
  /** Cancellation of this request. */
  signal?: AbortSignal;
}

/** Where an error reported to `onError` came from. */
export interface ErrorInfo {
  method: StateBinding["method"];
  target: string;
  /** 1 for the first round of a call. */
  round: number;
}

export interface RuntimeLimits {
  /** Rounds one call may take before it is refused (a client cannot loop forever). Default 64. */
  maxRounds?: number;
  /** Most `inputResponses` entries one request may carry. Default 64. */
  maxInputResponses?: number;
  /** Largest `inputResponses` (approximate JSON bytes). Default 262144 (256 KiB). */
  maxInputResponseBytes?: number;
  /** Deepest nesting inside `inputResponses`. Default 32. */
  maxInputResponseDepth?: number;
}

export interface RuntimeOptions {
  /** A codec, or the options to build one (see `createStateCodec`). */
  state: StateCodec | StateCodecOptions;
  /**
   * How many suspended generators this instance keeps so the next round of a call can resume
   * instead of replaying (a pure speed-up: any round can always replay from the state).
   * Default 1000; 0 turns it off.
   */
  liveCalls?: number;
  /** Told about author-code failures and internal errors; never about client mistakes. */
  onError?: (error: unknown, info: ErrorInfo) => void;
  limits?: RuntimeLimits;
  /** Clock for `now()` (ms). */
  clock?: () => number;
}

export type ToolCallResult = CallToolResult | InputRequiredResult;
export type PromptGetResult = GetPromptResult | InputRequiredResult;
export type ResourceReadResult = ReadResourceResult | InputRequiredResult;

export interface Runtime {
  readonly codec: StateCodec;
  readonly limits: Required<RuntimeLimits>;
  /** Run one round of `tools/call`. Throws `ProtocolError` for anything that must be a JSON-RPC error. */
  callTool(def: ToolDefinition, params: unknown, request?: RequestInfo): Promise<ToolCallResult>;
  /** Run one round of `prompts/get`. */
  getPrompt(def: PromptDefinition, params: unknown, request?: RequestInfo): Promise<PromptGetResult>;
  /** Run one round of `resources/read`. */
  readResource(def: ResourceDefinition, params: unknown, request?: RequestInfo): Promise<ResourceReadResult>;
}

const invalidParams = (message: string, reason: string, extra?: Record<string, unknown>) =>
  new ProtocolError(ErrorCode.InvalidParams, message, { reason, ...extra });

function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw invalidParams(`Invalid ${what}: ${describeZodError(parsed.error)}`, "invalid_params");
  return parsed.data;
}

/** One call's shared parts, whatever the method. */
interface CallSpec<R> {
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
}

/** The call a state belongs to; the arguments digest is computed once for open and seal. */
function bindingFor(method: StateBinding["method"], target: string, args: Record<string, unknown>, principal: string | undefined): StateBinding {
  const binding: StateBinding = { method, target, arguments: args, argumentsDigest: digestOf(args) };
  if (principal !== undefined) binding.principal = principal;
  return binding;
}

const PAYLOAD_LIMIT_REASON = "state_too_large";

/** Create the framework-free runtime: one method per multi-round-trip request kind. */
export function createRuntime(options: RuntimeOptions): Runtime {
  const codec: StateCodec = "seal" in options.state ? options.state : createStateCodec(options.state);
  const limits: Required<RuntimeLimits> = {
    maxRounds: options.limits?.maxRounds ?? 64,
    maxInputResponses: options.limits?.maxInputResponses ?? 64,
    maxInputResponseBytes: options.limits?.maxInputResponseBytes ?? 256 * 1024,
    maxInputResponseDepth: options.limits?.maxInputResponseDepth ?? 32,
  };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value <= 0) throw new TypeError(`limits.${name} must be a positive integer`);
  }
  const clock = options.clock ?? Date.now;
  const live = new LiveCalls(options.liveCalls ?? 1000);
  const report = (error: unknown, info: ErrorInfo) => {
    try {
      options.onError?.(error, info);
    } catch {
      // a failing error hook must not turn a handled failure into a crash
    }
  };

  /** Verify the token (integrity, expiry, binding); its data is not trusted as a journal yet. */
  function verifyState(token: string, spec: CallSpec<unknown>): unknown {
    try {
      return codec.open(token, spec.binding).data;
    } catch (error) {
      if (error instanceof StateError) throw invalidParams(`Invalid requestState: ${error.message}`, error.reason);
      throw error;
    }
  }

  /** The journal out of verified state data: shape, version and round cap checked. */
  function journalOf(data: unknown, spec: CallSpec<unknown>): StatePayload {
    const payload = statePayload.safeParse(data);
    if (!payload.success) throw invalidParams("Invalid requestState: payload is not a journal", "malformed");
    if (payload.data.v !== spec.version) {
      throw new DivergenceError(-1, undefined, undefined, `the definition's version changed from ${JSON.stringify(payload.data.v ?? null)} to ${JSON.stringify(spec.version ?? null)}`);
    }
    return payload.data;
  }

  function checkRounds(payload: StatePayload): void {
    if (payload.r >= limits.maxRounds) {
      throw invalidParams(`This call has taken ${payload.r} rounds, the server's limit; start it again`, "too_many_rounds", { maxRounds: limits.maxRounds });
    }
  }

  function ownResponses(raw: Record<string, unknown> | undefined): Map<string, unknown> {
    const map = new Map<string, unknown>();
    if (raw === undefined) return map;
    // Own keys only: an entry keyed "__proto__" must never be read through a prototype chain.
    const keys = Object.keys(raw);
    if (keys.length > limits.maxInputResponses) {
      throw invalidParams(`inputResponses has ${keys.length} entries, more than the limit of ${limits.maxInputResponses}`, "too_many_input_responses");
    }
    for (const key of keys) map.set(key, Object.getOwnPropertyDescriptor(raw, key)?.value);
    const over = exceedsJsonLimits([...map.values()], limits.maxInputResponseBytes, limits.maxInputResponseDepth + 1);
    if (over === "size") throw invalidParams(`inputResponses is larger than the limit of ${limits.maxInputResponseBytes} bytes`, "input_responses_too_large");
    if (over === "depth") throw invalidParams(`inputResponses is nested deeper than the limit of ${limits.maxInputResponseDepth}`, "input_responses_too_deep");
    return map;
  }

  async function run<R>(spec: CallSpec<R>, request: RequestInfo): Promise<R | InputRequiredResult> {
    let payload: StatePayload | undefined;
    let resumed: LiveCall | undefined;
    if (spec.requestState !== undefined) {
      const data = verifyState(spec.requestState, spec as CallSpec<unknown>);
      // Only after the token verified, bound to this call: resume this instance's suspended
      // generator. Its journal is the very object that was sealed into this token, so the
      // (O(journal)) validation of the decoded copy is skipped.
      resumed = live.take(spec.requestState, spec.owner);
      payload = resumed?.payload ?? journalOf(data, spec as CallSpec<unknown>);
      checkRounds(payload);
    }
    const responses = ownResponses(spec.inputResponses);
    const round = (payload?.r ?? 0) + 1;
    const info: ErrorInfo = { method: spec.binding.method, target: spec.binding.target, round };
    const callId = payload?.c ?? crypto.randomUUID();
    const holder = resumed?.context ?? { request };
    holder.request = request;
    const ctx = new CallContext(holder, callId);
    let outcome: Awaited<ReturnType<typeof runRound>>;
    try {
      outcome = await runRound(
        {
          start: () => spec.start(ctx),
          journal: payload?.j ?? [],
          outstanding: payload?.o,
          partial: payload?.p ?? {},
          responses,
          can: ctx.can,
          signal: ctx.signal,
          randomUUID: () => crypto.randomUUID(),
          clock,
        },
        resumed?.suspended,
      );
    } catch (error) {
      if (error instanceof AuthorCodeError) {
        report(error.cause, info);
        return spec.onAuthorFailure();
      }
      if (error instanceof DivergenceError) report(error, info);
      throw error;
    }
    if (outcome.type === "complete") {
      try {
        return spec.shape(outcome.value);
      } catch (error) {
        if (!(error instanceof ResultShapeError)) throw error;
        report(error, info);
        return spec.onAuthorFailure();
      }
    }
    const next: StatePayload = { r: round, c: callId, j: outcome.journal, o: outcome.outstanding };
    if (spec.version !== undefined) next.v = spec.version;
    if (outcome.partial && Object.keys(outcome.partial).length > 0) next.p = outcome.partial;
    let requestState: string;
    try {
      requestState = codec.seal({ binding: spec.binding, data: next });
    } catch (error) {
      report(error, info);
      if (error instanceof StateError) {
        throw new ProtocolError(ErrorCode.InternalError, "The call's state grew past the server's size limit", { reason: PAYLOAD_LIMIT_REASON });
      }
      return spec.onAuthorFailure(); // a step returned something that cannot be serialized
    }
    live.put(requestState, { suspended: outcome.suspended, context: holder, owner: spec.owner, payload: next });
    return { resultType: "input_required", inputRequests: outcome.inputRequests, requestState };
  }

  const internalError = () => {
    throw new ProtocolError(ErrorCode.InternalError, "Internal error", { reason: "internal_error" });
  };

  return {
    codec,
    limits,
    async callTool(def, rawParams, request = {}) {
      const params = parseOrThrow(callToolParams, rawParams, "tools/call params");
      if (params.name !== def.name) throw invalidParams(`Tool name "${params.name}" does not match "${def.name}"`, "invalid_params");
      const args = params.arguments ?? {};
      const input = def.input.safeParse(args);
      if (!input.success) throw invalidParams(`Invalid arguments for tool ${def.name}: ${describeZodError(input.error, "arguments")}`, "invalid_arguments");
      return run<CallToolResult>(
        {
          owner: def,
          binding: bindingFor("tools/call", def.name, args, request.principal),
          version: def.version,
          requestState: params.requestState,
          inputResponses: params.inputResponses,
          start: (ctx) => def.run(input.data, ctx),
          shape: (value) => shapeToolResult(def, value),
          onAuthorFailure: () => errorToolResult(`Tool "${def.name}" failed; the error was reported to the server.`),
        },
        request,
      );
    },
    async getPrompt(def, rawParams, request = {}) {
      const params = parseOrThrow(getPromptParams, rawParams, "prompts/get params");
      if (params.name !== def.name) throw invalidParams(`Prompt name "${params.name}" does not match "${def.name}"`, "invalid_params");
      const args = params.arguments ?? {};
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
      const params = parseOrThrow(readResourceParams, rawParams, "resources/read params");
      if (params.uri !== def.uri) throw invalidParams(`Resource uri "${params.uri}" does not match "${def.uri}"`, "invalid_params");
      return run<ReadResourceResult>(
        {
          owner: def,
          binding: bindingFor("resources/read", def.uri, {}, request.principal),
          version: def.version,
          requestState: params.requestState,
          inputResponses: params.inputResponses,
          start: (ctx) => def.run(def.uri, ctx),
          shape: (value) => shapeResourceResult(def, value),
          onAuthorFailure: internalError,
        },
        request,
      );
    },
  };
}
