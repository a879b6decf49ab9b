import type { z } from "zod";
import type { FormSchema } from "../authoring/elicitation-schema.js";
import type { PromptDefinition, ResourceDefinition, ResourceTemplateDefinition, ToolContent, ToolDefinition, ToolError } from "../authoring/definitions.js";
import { createRuntime, type ErrorInfo, type Runtime, type RuntimeOptions } from "../runtime/runtime.js";
import { createMemoryStore } from "../store/index.js";
import { StepFailedError } from "../authoring/effects.js";
import { refusalIn } from "../replay/answers.js";
import { DEFAULT_LIVE_CALLS } from "../runtime/options.js";
import { followTask, noAnswer, type ScriptedSignals, type SimulatedTask, type SimulatedWorld, withFailingSteps } from "./simulate-task.js";
import type { CallToolResult, ClientCapabilities, CreateMessageResult, ElicitResult, GetPromptResult, InputRequest, InputRequiredResult, ListRootsResult, ReadResourceResult } from "../wire/index.js";

/** A raw answer as a client sends it: an elicitation, sampling or roots result. */
export type AnswerValue = ElicitResult | CreateMessageResult | ListRootsResult;

/**
 * One scripted answer: the raw result, or a function of the request and round number (which
 * may return anything — the way to script an invalid answer).
 */
export type ScriptedAnswer = AnswerValue | typeof noAnswer | ((request: InputRequest, round: number) => unknown);

/**
 * Answers by `inputRequests` key. A list gives successive answers to successive asks under
 * that key; a function answers every ask it is given. A function for `answers` itself answers
 * every key.
 */
export type Answers = Record<string, ScriptedAnswer | ScriptedAnswer[]> | ((request: InputRequest, key: string, round: number) => unknown);

/** An ask in a few words, for messages: its method and message or schema. */
function requestSummary(request: InputRequest): string {
  const params = (request.params ?? {}) as { message?: unknown; requestedSchema?: unknown };
  const schema = params.requestedSchema === undefined ? "" : `, schema ${JSON.stringify(params.requestedSchema).slice(0, 300)}`;
  return `${request.method}${typeof params.message === "string" ? ` "${refusalIn(params.message).message}"` : ""}${schema}`;
}

/** Why the server refused the last answer to `request`, when its re-ask says so. */
function refusalOf(request: InputRequest): string | undefined {
  const message = (request.params as { message?: unknown } | undefined)?.message;
  return typeof message === "string" ? refusalIn(message).problem : undefined;
}

/** What `simulate` takes as the call's input: a tool's arguments, a prompt's, the uri to read for a resource template, or nothing for a resource. */
export type InputOf<D> =
  D extends ToolDefinition<infer I> ? z.input<I> : D extends PromptDefinition ? Record<string, string> : D extends ResourceTemplateDefinition<unknown> ? { uri: string } : Record<string, never>;

/** How simulate serves each round. */
export type SimulatedPaths = "replay" | "resume" | "both";

/** Options of `simulate`. */
export interface SimulateOptions {
  /** Declared client capabilities, for every round or per round; default: elicitation (form + url), sampling and roots. */
  capabilities?: (ClientCapabilities | ((round: number) => ClientCapabilities)) | undefined;
  principal?: string | undefined;
  /** Give up after this many rounds. Default 50. */
  maxRounds?: number | undefined;
  /**
   * - `"replay"` (default): every round replays from the sealed state, as when each round lands
   *   on another instance.
   * - `"resume"`: the runtime keeps the generator suspended between rounds (the same instance).
   * - `"both"`: every round resumes, and is then replayed from the state it produced, as another
   *   instance would, with the asks or result compared (the runtime's `verifyReplay`); any
   *   difference fails naming the round and the first differing effect.
   */
  paths?: SimulatedPaths | undefined;
  /** Options for the runtimes simulate builds (keys, limits, clock, ...); its own defaults otherwise. */
  runtimeOptions?: Partial<RuntimeOptions> | undefined;
  /**
   * Your own runtime(s) instead (a list is used round-robin, one per round, like instances behind
   * a load balancer; they must share keys). `paths` and `runtimeOptions` are then ignored, and
   * author errors reach that runtime's `onError` rather than the simulation.
   */
  runtime?: Runtime | Runtime[] | undefined;
  /** Author failures (a throw in `run` or a step, a bad result): `"throw"` (default) rejects; `"return"` lists them in `errors`. */
  authorErrors?: "throw" | "return" | undefined;
  /**
   * A call that becomes a task is followed to its end (the client declaring the tasks extension
   * in `capabilities`): asks answered from `answers` through tasks/update, sleeps, retry delays
   * and signal timeouts passed at once on a fake clock (simulate's own runtime), and values for
   * `waitForSignal` taken from here by name (`signalTimeout` to time a wait out). Once it
   * completes, the task is replayed from its journal and the result compared (unless `paths`
   * is `"resume"`).
   */
  signals?: ScriptedSignals | undefined;
  /** Steps that fail: the first `n` attempts of the named step throw (a retrying step then retries). */
  failSteps?: Record<string, number> | undefined;
}

/** One round of a simulation that ended with `input_required`. */
export interface SimulatedRound {
  /** 1-based. */
  round: number;
  inputRequests: Record<string, InputRequest>;
  /** Size of the requestState minted this round (bytes; 0 when none). */
  stateBytes: number;
}

/** An author failure the runtime reported during a simulation. */
export interface SimulatedError {
  error: unknown;
  info: ErrorInfo;
}

/** What `simulate` resolves with. */
export interface Simulation<R> {
  /** The final, complete result. */
  result: R;
  /** Every round that ended with input_required, in order. */
  rounds: SimulatedRound[];
  /** The state size per round (same as rounds[i].stateBytes). */
  stateBytes: number[];
  /** Author failures reported while simulating (only with `authorErrors: "return"`). */
  errors: SimulatedError[];
  /** The task the call became, if it did. */
  task?: SimulatedTask;
}

/** Author code failed during a simulation; `cause` is what it threw, `info` where. */
export class SimulatedAuthorError extends Error {
  override readonly name = "SimulatedAuthorError";
  constructor(
    readonly info: ErrorInfo,
    cause: unknown,
  ) {
    // A task's runs are not rounds (its info says round 0): say which task failed instead.
    const where = info.taskId !== undefined ? `in its task ${info.taskId}` : `in round ${info.round}`;
    const what = cause instanceof StepFailedError ? `its retries ran out — ${cause.message}` : cause instanceof Error ? cause.message : String(cause);
    super(`${info.method} ${info.target} failed ${where}: ${what}`, { cause });
  }
}

const ALL_CAPABILITIES: ClientCapabilities = { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} };

/** An elicitation answer that accepts with `content` (see the overload with a schema, which types it). */
export function accept(content?: Record<string, string | number | boolean | string[]>): { action: "accept"; content: Record<string, string | number | boolean | string[]> };
/**
 * An elicitation answer that accepts with `content`, typed from the ask's form schema —
 * `accept(Destination, { destination: "Kyoto" })`: a misspelt field or a value of the wrong type
 * is a compile error, not a re-ask found at run time.
 */
export function accept<S extends FormSchema>(schema: S, content: z.input<S>): { action: "accept"; content: Record<string, string | number | boolean | string[]> };
export function accept(
  first: Record<string, string | number | boolean | string[]> | FormSchema = {},
  content?: unknown,
): { action: "accept"; content: Record<string, string | number | boolean | string[]> } {
  return { action: "accept", content: (isZod(first) ? content : first) as Record<string, string | number | boolean | string[]> };
}
const isZod = (value: unknown): value is FormSchema => typeof value === "object" && value !== null && "safeParse" in value && typeof (value as { safeParse: unknown }).safeParse === "function";
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
  const answer = (request: InputRequest, key: string, round: number): unknown => {
    if (typeof answers === "function") return answers(request, key, round);
    if (!Object.hasOwn(answers, key)) {
      throw new Error(`simulate: no scripted answer for key "${key}" in round ${round} (asked: ${JSON.stringify(request)}; scripted keys: ${Object.keys(answers).join(", ") || "none"})`);
    }
    const entry = answers[key]!;
    let scripted: ScriptedAnswer;
    if (Array.isArray(entry)) {
      const n = used.get(key) ?? 0;
      if (n >= entry.length) throw new Error(`simulate: the ${entry.length} scripted answers for key "${key}" ran out in round ${round}`);
      scripted = entry[n]!;
    } else {
      scripted = entry;
    }
    used.set(key, (used.get(key) ?? 0) + 1);
    return typeof scripted === "function" ? (scripted as (r: InputRequest, n: number) => unknown)(request, round) : scripted;
  };
  /** Scripted keys no ask ever used: almost always a typo in the test. */
  const unused = () => (typeof answers === "function" ? [] : Object.keys(answers).filter((k) => !used.has(k)));
  return { answer, unused };
}

/** `structuredContent` as the tool's `output` schema types it (a record when it has none). */
export type StructuredOf<R> = [Exclude<R, ToolError>] extends [string | ToolContent] ? Record<string, unknown> : Exclude<R, ToolError>;

/** The complete result a definition gives: for a tool, `structuredContent` typed from its `output`. */
export type ResultOf<D> = D extends ToolDefinition<z.ZodObject, infer R> ? CallToolResult & { structuredContent?: StructuredOf<R> } : D extends PromptDefinition ? GetPromptResult : ReadResourceResult;

/** Where simulate's own runtime says signals go (`ctx.signalUrl`): nowhere real. */
const SIMULATED_SIGNAL_BASE = "https://simulate.invalid/signals/";

const ephemeralKey = () => [{ id: "sim", secret: crypto.getRandomValues(new Uint8Array(32)) }];

/**
 * Drive a tool, prompt or resource through every round in-process, answering each
 * `inputRequests` entry from `answers`, with the state sealed and opened for real each round.
 * By default every round replays from its sealed state; `paths: "both"` also checks that
 * resuming and replaying agree. Rejects when author code fails (unless `authorErrors:
 * "return"`), when the call does not complete within `maxRounds`, and when a scripted answer's
 * key was never asked.
 */
export async function simulate<D extends ToolDefinition | PromptDefinition | ResourceDefinition | ResourceTemplateDefinition<unknown>>(
  def: D,
  input: InputOf<D> = {} as InputOf<D>,
  answers: Answers = {},
  options: SimulateOptions = {},
): Promise<Simulation<ResultOf<D>>> {
  const errors: SimulatedError[] = [];
  const paths = options.paths ?? "replay";
  def = (def.type === "tool" && options.failSteps !== undefined ? withFailingSteps(def, options.failSteps) : def) as D;
  // simulate's own runtime runs on a fake clock (sleeps pass at once) and a store for tasks;
  // rounds in the foreground keep to the token, as without a store (no single use, no spill).
  let now = Date.now();
  const world: SimulatedWorld | undefined =
    options.runtime === undefined ? { store: createMemoryStore({ clock: () => now }), now: () => now, advanceTo: (at) => void (now = Math.max(now, at)) } : undefined;
  const runtimes =
    options.runtime === undefined
      ? [
          createRuntime({
            state: { keys: ephemeralKey(), clock: () => now },
            clock: () => now,
            store: world!.store,
            singleUse: false,
            spillBytes: 2 ** 31,
            signals: { baseUrl: SIMULATED_SIGNAL_BASE },
            ...options.runtimeOptions,
            liveCalls: paths === "replay" ? 0 : (options.runtimeOptions?.liveCalls ?? DEFAULT_LIVE_CALLS),
            verifyReplay: paths === "both" || options.runtimeOptions?.verifyReplay === true,
            onError: (error, info) => {
              errors.push({ error, info });
              options.runtimeOptions?.onError?.(error, info);
            },
          }),
        ]
      : Array.isArray(options.runtime)
        ? options.runtime
        : [options.runtime];
  if (runtimes.length === 0) throw new Error("simulate: runtime list is empty");
  const script = scriptFor(answers);
  const capabilities = options.capabilities ?? ALL_CAPABILITIES;
  const maxRounds = options.maxRounds ?? 50;
  const rounds: SimulatedRound[] = [];
  let requestState: string | undefined;
  let inputResponses: Record<string, unknown> | undefined;
  // How often in a row each key was asked the same thing and given the same answer.
  const refused = new Map<string, { text: string; times: number; rounds: number[]; answer?: unknown; request?: InputRequest }>();

  for (let round = 1; round <= maxRounds; round++) {
    const runtime = runtimes[(round - 1) % runtimes.length]!;
    const info = {
      clientCapabilities: typeof capabilities === "function" ? capabilities(round) : capabilities,
      ...(options.principal !== undefined ? { principal: options.principal } : {}),
    };
    const extra = { ...(requestState !== undefined ? { requestState } : {}), ...(inputResponses !== undefined ? { inputResponses } : {}) };
    const result =
      def.type === "tool"
        ? await runtime.callTool(def, { name: def.name, arguments: input as Record<string, unknown>, ...extra }, info)
        : def.type === "prompt"
          ? await runtime.getPrompt(def, { name: def.name, arguments: input, ...extra }, info)
          : await runtime.readResource(def, { uri: def.type === "resource" ? def.uri : (input as { uri: string }).uri, ...extra }, info);
    const checkErrors = () => {
      if (errors.length > 0 && options.authorErrors !== "return") throw new SimulatedAuthorError(errors[0]!.info, errors[0]!.error);
    };
    checkErrors();
    if (result.resultType === "task") {
      if (def.type !== "tool") throw new Error("simulate: only a tool call becomes a task");
      runtime.define([def]);
      const followed = await followTask({
        runtime,
        world,
        def,
        input,
        taskId: (result as { taskId: string }).taskId,
        info,
        answer: script.answer,
        signals: options.signals ?? {},
        checkErrors,
        verify: paths !== "resume",
        signalBaseUrl: options.runtime === undefined ? (options.runtimeOptions?.signals?.baseUrl ?? SIMULATED_SIGNAL_BASE) : undefined,
        maxPolls: 10_000,
      });
      return { result: followed.result as ResultOf<D>, rounds, stateBytes: rounds.map((r) => r.stateBytes), errors, task: followed.task };
    }
    if (result.resultType !== "input_required") {
      // A call that ended in an author failure may never reach the asks its answers were for.
      const unused = errors.length === 0 ? script.unused() : [];
      if (unused.length > 0) {
        const asked = [...new Set(rounds.flatMap((r) => Object.keys(r.inputRequests)))];
        throw new Error(`simulate: scripted answers under keys nobody asked: ${unused.map((k) => `"${k}"`).join(", ")} (asked: ${asked.map((k) => `"${k}"`).join(", ") || "nothing"})`);
      }
      return { result: result as ResultOf<D>, rounds, stateBytes: rounds.map((r) => r.stateBytes), errors };
    }
    const ir = result as InputRequiredResult;
    const requests = ir.inputRequests ?? {};
    rounds.push({ round, inputRequests: requests, stateBytes: ir.requestState?.length ?? 0 });
    requestState = ir.requestState;
    const previous = inputResponses;
    inputResponses = Object.fromEntries(
      Object.entries(requests).flatMap(([key, req]) => {
        const given = script.answer(req, key, round);
        return given === noAnswer ? [] : [[key, given]];
      }),
    );
    if (Object.keys(inputResponses).length === 0)
      throw new Error(`simulate: every ask of round ${round} is scripted noAnswer (${Object.keys(requests).join(", ")}): nothing would ever answer the call`);
    for (const [key, answer] of Object.entries(inputResponses)) {
      const text = `${JSON.stringify(requests[key])}\u0000${JSON.stringify(answer)}`;
      const again = previous !== undefined && Object.hasOwn(previous, key) && refused.get(key)?.text === text;
      const entry = again ? refused.get(key)! : { text, times: 0, rounds: [] };
      entry.times++;
      entry.rounds.push(round);
      entry.answer = answer;
      entry.request = requests[key]!;
      refused.set(key, entry);
    }
  }
  // Out of rounds. An ask asked round after round with the same answer is, almost always, an
  // answer its schema refuses (the call asks again instead of going on): name it.
  const stuck = [...refused].filter(([, e]) => e.times >= 3 && e.rounds.at(-1) === maxRounds);
  if (stuck.length > 0) {
    const [key, e] = stuck[0]!;
    throw new Error(
      `simulate: the call did not complete within ${maxRounds} rounds: it asked for "${key}" in each of the last ${e.times} rounds and got the same answer each time, ${JSON.stringify(e.answer)} — ${refusalOf(e.request!) !== undefined ? `which the ask's schema refuses: ${refusalOf(e.request!)}` : "an answer the ask's schema refuses is asked for again"}. Check it against the ask (${requestSummary(e.request!)}).`,
    );
  }
  throw new Error(`simulate: the call did not complete within ${maxRounds} rounds`);
}
