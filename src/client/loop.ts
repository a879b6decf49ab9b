import { z } from "zod";
import {
  type Capability,
  capabilityCheck,
  capabilityOfRequest,
  type ClientCapabilities,
  type CreateMessageParams,
  type CreateMessageResult,
  type ElicitFormParams,
  type ElicitResult,
  type ElicitUrlParams,
  type InputRequest,
  type InputRequiredResult,
  inputRequiredResult,
  type ListRootsResult,
  type Root,
  describeZodError,
} from "../wire/index.js";
import { ClientError } from "./errors.js";

/**
 * Sends one request with a fresh JSON-RPC id and returns its `result` (throws ClientError on a
 * JSON-RPC error). A sender may carry the capabilities it declares on every request.
 */
export type Send = ((method: string, params: Record<string, unknown>) => Promise<unknown>) & { readonly capabilities?: ClientCapabilities };

/** Where an embedded request came from, for handlers that care. */
export interface AskContext {
  key: string;
  /** 1-based round of the call. */
  round: number;
  /** Aborted when another handler of the same round fails, or the caller's `signal` aborts. */
  signal: AbortSignal;
}

/** The caller's answers to the server's embedded requests. */
export interface InputHandlers {
  elicit?: (params: ElicitFormParams | ElicitUrlParams, ask: AskContext) => ElicitResult | Promise<ElicitResult>;
  sample?: (params: CreateMessageParams, ask: AskContext) => CreateMessageResult | Promise<CreateMessageResult>;
  roots?: (ask: AskContext) => ListRootsResult | Root[] | Promise<ListRootsResult | Root[]>;
}

export interface RoundInfo {
  round: number;
  method: string;
  result: InputRequiredResult;
}

export interface LoopOptions {
  /** Give up after this many input_required rounds. Default 10 (peers use 8–10). */
  maxRounds?: number;
  /** Most asks one round may carry; more end the call (`too_many_asks`). Default 32. */
  maxAsksPerRound?: number;
  /**
   * What this client declared: an ask for any other kind ends the call (`undeclared_kind`)
   * instead of being answered. Default: the sender's own (`createFetchSender` carries it), else
   * the kinds `handlers` can answer.
   */
  capabilities?: ClientCapabilities;
  /** Aborts the call between rounds and every handler's `signal`. */
  signal?: AbortSignal;
  /** Called with every input_required result before it is answered (logging, UIs). */
  onRound?: (info: RoundInfo) => void;
}

export type MultiRoundMethod = "tools/call" | "prompts/get" | "resources/read";

async function answer(request: InputRequest, handlers: InputHandlers, ask: AskContext): Promise<unknown> {
  switch (request.method) {
    case "elicitation/create":
      if (!handlers.elicit) throw new ClientError("no_handler", `the server asked "${ask.key}" for elicitation and no elicit handler is set`);
      return handlers.elicit(request.params, ask);
    case "sampling/createMessage":
      if (!handlers.sample) throw new ClientError("no_handler", `the server asked "${ask.key}" for sampling and no sample handler is set`);
      return handlers.sample(request.params, ask);
    case "roots/list": {
      if (!handlers.roots) throw new ClientError("no_handler", `the server asked "${ask.key}" for roots and no roots handler is set`);
      const roots = await handlers.roots(ask);
      return Array.isArray(roots) ? { roots } : roots;
    }
  }
}

const resultTypeOnly = z.looseObject({ resultType: z.string().optional() });

/** The kinds `handlers` can answer, as a declaration. */
function declaredBy(handlers: InputHandlers): ClientCapabilities {
  return {
    ...(handlers.elicit ? { elicitation: { form: {}, url: {} } } : {}),
    ...(handlers.sample ? { sampling: {} } : {}),
    ...(handlers.roots ? { roots: {} } : {}),
  };
}

/** Answer every ask of one round at once; the first failure aborts the others' signal. */
async function answerRound(requests: Array<[string, InputRequest]>, handlers: InputHandlers, round: number, outer: AbortSignal | undefined): Promise<Array<readonly [string, unknown]>> {
  const siblings = new AbortController();
  const forward = () => siblings.abort(outer?.reason);
  outer?.addEventListener("abort", forward, { once: true });
  try {
    return await Promise.all(
      requests.map(async ([key, request]) => {
        try {
          return [key, await answer(request, handlers, { key, round, signal: siblings.signal })] as const;
        } catch (error) {
          siblings.abort(error);
          throw error;
        }
      }),
    );
  } finally {
    outer?.removeEventListener("abort", forward);
  }
}

/**
 * The MRTR client loop: send the request; while the result is `input_required`, answer every
 * embedded request with `handlers` and retry the same method and params with a new id, the
 * answers as `inputResponses` and the `requestState` echoed byte-for-byte (absent when none
 * came). A missing `resultType` means complete; an unknown one is refused.
 */
export async function callWithInput<R = Record<string, unknown>>(
  send: Send,
  method: MultiRoundMethod,
  params: Record<string, unknown>,
  handlers: InputHandlers,
  options: LoopOptions = {},
): Promise<R> {
  const maxRounds = options.maxRounds ?? 10;
  const maxAsks = options.maxAsksPerRound ?? 32;
  const can: (kind: Capability) => boolean = capabilityCheck(options.capabilities ?? send.capabilities ?? declaredBy(handlers));
  // Never carry answers or state from elsewhere: each call starts from its own params.
  const { inputResponses: _r, requestState: _s, ...base } = params;
  let next: Record<string, unknown> = base;
  for (let round = 1; ; round++) {
    if (options.signal?.aborted) throw new ClientError("aborted", `${method} was aborted`);
    const raw = await send(method, next);
    const typed = resultTypeOnly.safeParse(raw);
    if (!typed.success) throw new ClientError("invalid_result", `${method} returned a result that is not an object`);
    const kind = typed.data.resultType ?? "complete";
    if (kind === "complete") return raw as R;
    if (kind !== "input_required") throw new ClientError("unknown_result_type", `${method} returned an unknown resultType "${kind}"`);
    const parsed = inputRequiredResult.safeParse(raw);
    if (!parsed.success) throw new ClientError("invalid_result", `invalid input_required result: ${describeZodError(parsed.error)}`);
    if (round > maxRounds) throw new ClientError("round_limit", `${method} still needed input after ${maxRounds} rounds; giving up`);
    options.onRound?.({ round, method, result: parsed.data });
    const requests = Object.entries(parsed.data.inputRequests ?? {});
    if (requests.length > maxAsks) throw new ClientError("too_many_asks", `${method} asked ${requests.length} things in one round, more than this client's limit of ${maxAsks}`);
    for (const [key, request] of requests) {
      const kind = capabilityOfRequest(request);
      if (!can(kind)) throw new ClientError("undeclared_kind", `the server asked "${key}" for ${kind}, which this client did not declare`);
    }
    const answers = await answerRound(requests, handlers, round, options.signal);
    next = { ...base };
    if (requests.length > 0) next.inputResponses = Object.fromEntries(answers);
    if (parsed.data.requestState !== undefined) next.requestState = parsed.data.requestState;
  }
}
