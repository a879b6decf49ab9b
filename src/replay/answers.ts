import { z } from "zod";
import { elicitResult, type InputRequest } from "../wire/index.js";
import type { AskEffect } from "../authoring/effects.js";
import { plainElicitResult } from "../wire/plain-params.js";

/** The typed value an ask yields, or why the answer could not be used. */
export type AnswerCheck = { ok: true; value: unknown } | { ok: false; problem: string };

/**
 * The author's own answer schema threw (a `refine` or `transform` that throws) instead of
 * reporting an issue: a bug in author code, never the client's fault.
 */
export class AnswerSchemaError extends Error {
  override readonly name = "AnswerSchemaError";
}

// What a recorded answer keeps: the members the runtime understands, nothing else. zod objects
// strip unknown members, so a valid answer padded with a large unknown member records (and
// seals into the state) only what the author can read.
const samplingBlock = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text"), text: z.string() }),
  z.object({ type: z.literal("image"), data: z.string(), mimeType: z.string() }),
  z.object({ type: z.literal("audio"), data: z.string(), mimeType: z.string() }),
  z.object({ type: z.literal("tool_use"), id: z.string(), name: z.string(), input: z.record(z.string(), z.unknown()) }),
  z.object({
    type: z.literal("tool_result"),
    toolUseId: z.string(),
    content: z.array(z.unknown()),
    structuredContent: z.record(z.string(), z.unknown()).optional(),
    isError: z.boolean().optional(),
  }),
]);
const recordedSampling = z.object({
  role: z.enum(["user", "assistant"]),
  content: z.union([samplingBlock, z.array(samplingBlock)]),
  model: z.string(),
  stopReason: z.string().optional(),
});
const recordedRoots = z.object({
  roots: z.array(z.object({ uri: z.string().startsWith("file://"), name: z.string().optional() })),
});

/** At most this much of the problem goes into a re-ask's message (a schema may report many issues). */
const MAX_PROBLEM_CHARS = 300;

/** A schema's complaint in words a person answering can act on: `field: message; …`. */
function issuesText(issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>): string {
  const text = issues.map((i) => (i.path.length > 0 ? `${i.path.map(String).join(".")}: ${i.message}` : i.message)).join("; ");
  return text.length > MAX_PROBLEM_CHARS ? `${text.slice(0, MAX_PROBLEM_CHARS - 1)}…` : text;
}

/**
 * A form elicitation asked again because its last answer was refused: the same ask (its
 * fingerprint is computed from the ask, not from this request), its message saying why, so the
 * person answering is not shown the same question with no reason.
 */
function reaskedRequest(request: InputRequest, problem: string): InputRequest {
  if (request.method !== "elicitation/create") return request;
  return { ...request, params: { ...request.params, message: `${request.params.message}${REFUSED_PREFIX}${problem}${REFUSED_SUFFIX}` } };
}

/** The asks as the client gets them: each one whose last answer was refused says why. */
export function withRefusals(inputRequests: Record<string, InputRequest>, refused: Record<string, string> | undefined): Record<string, InputRequest> {
  if (refused === undefined) return inputRequests;
  return Object.fromEntries(Object.entries(inputRequests).map(([key, request]) => [key, Object.hasOwn(refused, key) ? reaskedRequest(request, refused[key]!) : request]));
}

const REFUSED_PREFIX = "\n\n(Your previous answer was not accepted: ";
const REFUSED_SUFFIX = ". Please answer again.)";

/** A re-ask's message split back into the ask's own message and why the last answer was refused. */
export function refusalIn(message: string): { message: string; problem: string | undefined } {
  const at = message.lastIndexOf(REFUSED_PREFIX);
  if (at < 0 || !message.endsWith(REFUSED_SUFFIX)) return { message, problem: undefined };
  return { message: message.slice(0, at), problem: message.slice(at + REFUSED_PREFIX.length, message.length - REFUSED_SUFFIX.length) };
}

/**
 * Validate a client's answer against the ask it was given for. Elicitation content is checked
 * against the author's zod schema; sampling and roots results against their wire shape, keeping
 * only their known members. zod drops `__proto__` members while parsing, so nothing returned
 * here can carry a prototype. Throws `AnswerSchemaError` when the author's schema throws.
 */
export function checkAnswer(effect: AskEffect, answer: unknown): AnswerCheck {
  switch (effect.kind) {
    case "elicit":
    case "elicitUrl": {
      // Read by hand when plainly valid (every round of a well-behaved client), else by zod.
      let result = plainElicitResult(answer);
      if (result === undefined) {
        const parsed = elicitResult.safeParse(answer);
        if (!parsed.success) return { ok: false, problem: `not an elicitation result (${issuesText(parsed.error.issues)})` };
        result = parsed.data;
      }
      const { action } = result;
      if (action !== "accept" || effect.kind === "elicitUrl") return { ok: true, value: { action } };
      let content: ReturnType<typeof effect.schema.safeParse>;
      try {
        content = effect.schema.safeParse(result.content ?? {});
      } catch (cause) {
        throw new AnswerSchemaError(`the answer schema threw while validating an answer: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
      }
      if (!content.success) return { ok: false, problem: issuesText(content.error.issues) };
      return { ok: true, value: { action, content: content.data } };
    }
    case "sample": {
      const parsed = recordedSampling.safeParse(answer);
      return parsed.success ? { ok: true, value: parsed.data } : { ok: false, problem: "not a sampling result" };
    }
    case "roots": {
      const parsed = recordedRoots.safeParse(answer);
      return parsed.success ? { ok: true, value: parsed.data.roots } : { ok: false, problem: "not a roots list" };
    }
  }
}
