import { acceptedContent, createRequestStateCodec, inputRequired } from "@modelcontextprotocol/server";
import { z } from "zod";
import { createStateCodec, type ElicitEffect, elicit, type RunContext, type StateCodec, type StateKey, step, tool, toRequestedSchema } from "mcp-yield";
import { elicitResult } from "mcp-yield/wire";
import { argumentsDigest } from "../src/internal.js";

/**
 * One tool written several ways: ask for a number R times, then answer with the sum. This is the
 * replay benchmark's subject: (a) a generator, (b) a hand-written state machine on our codec,
 * (b2) the same keeping every answer, (c) a hand-written handler on the SDK's inputRequired() and
 * createRequestStateCodec, and (f) the replay floor, (a)'s code replayed with no runtime.
 */

export const Num = z.object({ n: z.number().int() });
const requestedSchema = toRequestedSchema(Num);

/** (a) The generator. */
export const countGenerator = tool({
  name: "count",
  description: "asks for R numbers and sums them",
  input: z.object({ rounds: z.number().int().min(1).max(1000) }),
  *run({ rounds }) {
    let sum = 0;
    for (let i = 0; i < rounds; i++) {
      const a = yield* elicit(`Number ${i + 1} of ${rounds}?`, Num);
      if (a.action === "accept") sum += a.content.n;
    }
    return `sum ${sum}`;
  },
});

/**
 * (a) with a step a round: each answer goes through `step("add")` (a side effect's shape), so
 * with a store every round after the first claims its state and runs a step under that claim.
 */
export const countStepsGenerator = tool({
  name: "count",
  description: "asks for R numbers and sums them, a step per answer",
  input: z.object({ rounds: z.number().int().min(1).max(1000) }),
  *run({ rounds }) {
    let sum = 0;
    for (let i = 0; i < rounds; i++) {
      const a = yield* elicit(`Number ${i + 1} of ${rounds}?`, Num);
      const n = a.action === "accept" ? a.content.n : 0;
      sum = yield* step("add", async () => sum + n);
    }
    return `sum ${sum}`;
  },
});

type CallParams = { name: string; arguments: { rounds: number }; inputResponses?: Record<string, unknown>; requestState?: string };
type Progress = { i: number; sum: number };

/** (b) The same tool as an explicit state machine with our codec (same binding, same answer checks). */
export function handWrittenCount(keys: StateKey[]) {
  const codec: StateCodec<Progress> = createStateCodec<Progress>({ keys });
  return (params: CallParams) => {
    const rounds = params.arguments.rounds;
    const binding = { method: "tools/call" as const, target: "count", arguments: params.arguments };
    let st: Progress = params.requestState === undefined ? { i: 0, sum: 0 } : codec.open(params.requestState, binding).data;
    const key = `n${st.i}`;
    const raw = params.inputResponses && Object.hasOwn(params.inputResponses, key) ? params.inputResponses[key] : undefined;
    const answer = elicitResult.safeParse(raw);
    if (answer.success) {
      const content = answer.data.action === "accept" ? Num.safeParse(answer.data.content) : undefined;
      if (answer.data.action !== "accept" || content?.success) st = { i: st.i + 1, sum: st.sum + (content?.success ? content.data.n : 0) };
    }
    if (st.i >= rounds) return { resultType: "complete", content: [{ type: "text", text: `sum ${st.sum}` }] };
    const next = `n${st.i}`;
    return {
      resultType: "input_required",
      inputRequests: { [next]: { method: "elicitation/create", params: { mode: "form", message: `Number ${st.i + 1} of ${rounds}?`, requestedSchema } } },
      requestState: codec.seal({ binding, data: st }),
    };
  };
}

/** (c) The same tool on the SDK's own helpers, as its docs show. */
export function sdkCount(key: Uint8Array) {
  const codec = createRequestStateCodec<Progress>({ key });
  const ctx = {} as never; // no bind callback: verify/mint ignore the context
  return async (params: CallParams) => {
    const rounds = params.arguments.rounds;
    let st: Progress = params.requestState === undefined ? { i: 0, sum: 0 } : await codec.verify(params.requestState, ctx);
    const key = `n${st.i}`;
    const content = acceptedContent(params.inputResponses, key, Num);
    if (content) st = { i: st.i + 1, sum: st.sum + content.n };
    if (st.i >= rounds) return { resultType: "complete", content: [{ type: "text", text: `sum ${st.sum}` }] };
    return inputRequired({
      inputRequests: { [`n${st.i}`]: inputRequired.elicit({ message: `Number ${st.i + 1} of ${rounds}?`, requestedSchema: Num }) },
      requestState: await codec.mint(st),
    });
  };
}

/** Drive one whole call: answer every ask with n = 1 until complete. Returns the rounds taken. */
export async function driveCall(call: (params: CallParams) => unknown, rounds: number): Promise<number> {
  let params: CallParams = { name: "count", arguments: { rounds } };
  for (let r = 1; ; r++) {
    const result = (await call(params)) as { resultType: string; inputRequests?: Record<string, unknown>; requestState?: string };
    if (result.resultType !== "input_required") return r;
    const inputResponses = Object.fromEntries(Object.keys(result.inputRequests ?? {}).map((k) => [k, { action: "accept", content: { n: 1 } }]));
    params = { name: "count", arguments: { rounds }, inputResponses, ...(result.requestState !== undefined ? { requestState: result.requestState } : {}) };
  }
}

type Kept = { answers: Array<{ action: string; content?: { n: number } }> };

/** (b2) The state machine that keeps every answer, as any real multi-question tool keeps its answers. */
export function handWrittenAllCount(keys: StateKey[]) {
  const codec: StateCodec<Kept> = createStateCodec<Kept>({ keys });
  return (params: CallParams) => {
    const rounds = params.arguments.rounds;
    const binding = { method: "tools/call" as const, target: "count", arguments: params.arguments };
    const st: Kept = params.requestState === undefined ? { answers: [] } : codec.open(params.requestState, binding).data;
    const key = `n${st.answers.length}`;
    const raw = params.inputResponses && Object.hasOwn(params.inputResponses, key) ? params.inputResponses[key] : undefined;
    const answer = elicitResult.safeParse(raw);
    if (answer.success) {
      const content = answer.data.action === "accept" ? Num.safeParse(answer.data.content) : undefined;
      if (answer.data.action !== "accept") st.answers.push({ action: answer.data.action });
      else if (content?.success) st.answers.push({ action: "accept", content: content.data });
    }
    if (st.answers.length >= rounds) return { resultType: "complete", content: [{ type: "text", text: `sum ${st.answers.reduce((s, a) => s + (a.content?.n ?? 0), 0)}` }] };
    const next = `n${st.answers.length}`;
    return {
      resultType: "input_required",
      inputRequests: { [next]: { method: "elicitation/create", params: { mode: "form", message: `Number ${st.answers.length + 1} of ${rounds}?`, requestedSchema } } },
      requestState: codec.seal({ binding, data: st }),
    };
  };
}

type Outcome = { action: "accept"; content: { n: number } } | { action: "decline" } | { action: "cancel" };

/** An earlier answer, from its line: `a<content JSON>`, `d` or `c`. */
function outcomeOfLine(line: string): Outcome {
  if (line[0] === "a") return { action: "accept", content: JSON.parse(line.slice(1)) as { n: number } };
  return { action: line === "d" ? "decline" : "cancel" };
}

/** The line for a usable new answer (accept with an integer `n`, decline, cancel), else `undefined`. */
function lineOfAnswer(answer: unknown): string | undefined {
  const raw = answer as { action?: unknown; content?: { n?: unknown } } | undefined;
  if (raw?.action === "accept") return Number.isInteger(raw.content?.n) ? `a${JSON.stringify({ n: raw.content!.n })}` : undefined;
  return raw?.action === "decline" ? "d" : raw?.action === "cancel" ? "c" : undefined;
}

/**
 * (f) The replay floor: the least any design that replays the generator pays on our codec. The
 * very `run` of (a) is started again every round and fed its earlier answers, decoded from lines
 * the token carries (`a{"n":1}`, as (a)'s journal holds them, without fingerprints); the new
 * answer is read by hand and appended. No fingerprints (nothing notices changed code), no call
 * id or outstanding asks, no limits or snapshots of other value types. Not a way to write a
 * tool: (a) stateless over (f) is what the runtime's checks and generality cost.
 */
export function replayFloorCount(keys: StateKey[]) {
  const codec: StateCodec<{ r: number }> = createStateCodec<{ r: number }>({ keys });
  const ctx = {} as RunContext; // the count tool does not use its context
  return (params: CallParams) => {
    // The arguments digest as (a) gets it (the runtime's admission, cached by canonical text): a
    // floor must not pay for work (a) does not do (until 2026-12-03 it hashed them every request).
    const binding = { method: "tools/call" as const, target: "count", arguments: params.arguments, argumentsDigest: argumentsDigest(params.arguments) };
    let body = params.requestState === undefined ? "" : (codec.open(params.requestState, binding).body ?? "");
    const generator = countGenerator.run(params.arguments, ctx) as Generator<ElicitEffect, string, Outcome>;
    let step = generator.next();
    let at = 0; // where the next earlier answer's line starts in `body`
    let asked = 0;
    while (!step.done) {
      if (at < body.length) {
        const end = body.indexOf("\n", at);
        step = generator.next(outcomeOfLine(body.slice(at, end)));
        at = end + 1;
        asked++;
        continue;
      }
      const key = `elicit-${asked}`;
      const line = lineOfAnswer(params.inputResponses?.[key]);
      if (line === undefined) {
        const { message, requestedSchema } = step.value.params;
        return {
          resultType: "input_required",
          inputRequests: { [key]: { method: "elicitation/create", params: { mode: "form", message, requestedSchema } } },
          requestState: codec.seal({ binding, data: { r: asked }, body }),
        };
      }
      body += `${line}\n`;
      at = body.length;
      step = generator.next(outcomeOfLine(line));
      asked++;
    }
    return { resultType: "complete", content: [{ type: "text", text: step.value }] };
  };
}
