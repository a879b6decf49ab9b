import { z } from "zod";
import {
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

/** Sends one request with a fresh JSON-RPC id and returns its `result` (throws ClientError on a JSON-RPC error). */
export type Send = (method: string, params: Record<string, unknown>) => Promise<unknown>;

/** Where an embedded request came from, for handlers that care. */
export interface AskContext {
  key: string;
  /** 1-based round of the call. */
  round: number;
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
  // Never carry answers or state from elsewhere: each call starts from its own params.
  const { inputResponses: _r, requestState: _s, ...base } = params;
  let next: Record<string, unknown> = base;
  for (let round = 1; ; round++) {
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
    const answers = await Promise.all(requests.map(async ([key, request]) => [key, await answer(request, handlers, { key, round })] as const));
    next = { ...base };
    if (requests.length > 0) next.inputResponses = Object.fromEntries(answers);
    if (parsed.data.requestState !== undefined) next.requestState = parsed.data.requestState;
  }
}
