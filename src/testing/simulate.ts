import { createRuntime, type Runtime } from "../runtime/index.js";
import type { PromptDefinition, ResourceDefinition, ToolDefinition } from "../runtime/index.js";
import type { CallToolResult, ClientCapabilities, GetPromptResult, InputRequest, InputRequiredResult, ReadResourceResult } from "../wire/index.js";

/** One scripted answer: the raw result, or a function of the request and round number. */
export type ScriptedAnswer = unknown | ((request: InputRequest, round: number) => unknown);

/**
 * Answers by `inputRequests` key. A list gives successive answers to successive asks under
 * that key; a function answers every ask it is given. A function for `answers` itself answers
 * every key.
 */
export type Answers = Record<string, ScriptedAnswer | ScriptedAnswer[]> | ((request: InputRequest, key: string, round: number) => unknown);

export interface SimulateOptions {
  /** Declared client capabilities; default: elicitation (form + url), sampling and roots. */
  capabilities?: ClientCapabilities;
  principal?: string;
  /** Give up after this many rounds. Default 50. */
  maxRounds?: number;
  /**
   * A runtime to use (e.g. with your codec and limits); default: one with an ephemeral key.
   * A list is used round-robin, one runtime per round, like instances behind a load balancer
   * (they must share keys).
   */
  runtime?: Runtime | Runtime[];
}

export interface SimulatedRound {
  /** 1-based. */
  round: number;
  inputRequests: Record<string, InputRequest>;
  /** Size of the requestState minted this round (bytes; 0 when none). */
  stateBytes: number;
}

export interface Simulation<R> {
  /** The final, complete result. */
  result: R;
  /** Every round that ended with input_required, in order. */
  rounds: SimulatedRound[];
  /** The state size per round (same as rounds[i].stateBytes). */
  stateBytes: number[];
}

const ALL_CAPABILITIES: ClientCapabilities = { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} };

/** An elicitation answer that accepts with `content`. */
export const accept = (content: Record<string, unknown> = {}) => ({ action: "accept" as const, content });
/** An elicitation answer that declines. */
export const decline = () => ({ action: "decline" as const });
/** An elicitation answer that cancels. */
export const cancel = () => ({ action: "cancel" as const });
/** A sampling answer with one text block. */
export const sampled = (text: string, model = "test-model") => ({ role: "assistant" as const, content: { type: "text" as const, text }, model, stopReason: "endTurn" });
/** A roots answer. */
export const roots = (...uris: string[]) => ({ roots: uris.map((uri) => ({ uri })) });

function scriptFor(answers: Answers) {
  const used = new Map<string, number>();
  return (request: InputRequest, key: string, round: number): unknown => {
    if (typeof answers === "function") return answers(request, key, round);
    if (!Object.hasOwn(answers, key)) {
      throw new Error(`simulate: no scripted answer for key "${key}" in round ${round} (asked: ${JSON.stringify(request)})`);
    }
    const entry = answers[key];
    let answer: ScriptedAnswer = entry;
    if (Array.isArray(entry)) {
      const n = used.get(key) ?? 0;
      if (n >= entry.length) throw new Error(`simulate: the ${entry.length} scripted answers for key "${key}" ran out in round ${round}`);
      used.set(key, n + 1);
      answer = entry[n];
    }
    return typeof answer === "function" ? (answer as (r: InputRequest, n: number) => unknown)(request, round) : answer;
  };
}

type ResultOf<D> = D extends ToolDefinition ? CallToolResult : D extends PromptDefinition ? GetPromptResult : ReadResourceResult;

/**
 * Drive a tool, prompt or resource through every round in-process, answering each
 * `inputRequests` entry from `answers`, with the state sealed and opened for real each round.
 */
export async function simulate<D extends ToolDefinition | PromptDefinition | ResourceDefinition>(
  def: D,
  input: Record<string, unknown> = {},
  answers: Answers = {},
  options: SimulateOptions = {},
): Promise<Simulation<ResultOf<D>>> {
  const runtimes = options.runtime === undefined
    ? [createRuntime({ state: { keys: [{ id: "sim", secret: crypto.getRandomValues(new Uint8Array(32)) }] } })]
    : Array.isArray(options.runtime) ? options.runtime : [options.runtime];
  if (runtimes.length === 0) throw new Error("simulate: runtime list is empty");
  const answer = scriptFor(answers);
  const info = { clientCapabilities: options.capabilities ?? ALL_CAPABILITIES, ...(options.principal !== undefined ? { principal: options.principal } : {}) };
  const maxRounds = options.maxRounds ?? 50;
  const rounds: SimulatedRound[] = [];
  let requestState: string | undefined;
  let inputResponses: Record<string, unknown> | undefined;

  for (let round = 1; round <= maxRounds; round++) {
    const runtime = runtimes[(round - 1) % runtimes.length]!;
    const extra = { ...(requestState !== undefined ? { requestState } : {}), ...(inputResponses !== undefined ? { inputResponses } : {}) };
    const result =
      def.type === "tool"
        ? await runtime.callTool(def, { name: def.name, arguments: input, ...extra }, info)
        : def.type === "prompt"
          ? await runtime.getPrompt(def, { name: def.name, arguments: input, ...extra }, info)
          : await runtime.readResource(def, { uri: def.uri, ...extra }, info);
    if (result.resultType !== "input_required") {
      return { result: result as ResultOf<D>, rounds, stateBytes: rounds.map((r) => r.stateBytes) };
    }
    const ir = result as InputRequiredResult;
    const requests = ir.inputRequests ?? {};
    rounds.push({ round, inputRequests: requests, stateBytes: ir.requestState?.length ?? 0 });
    requestState = ir.requestState;
    inputResponses = Object.fromEntries(Object.entries(requests).map(([key, req]) => [key, answer(req, key, round)]));
  }
  throw new Error(`simulate: the call did not complete within ${maxRounds} rounds`);
}
