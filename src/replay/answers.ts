import { z } from "zod";
import { elicitResult } from "../wire/index.js";
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
        if (!parsed.success) return { ok: false, problem: "not an elicitation result" };
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
      if (!content.success) return { ok: false, problem: "accepted content does not match the requested schema" };
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
