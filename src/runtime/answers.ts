import { createMessageResult, elicitResult, listRootsResult } from "../wire/index.js";
import type { AskEffect } from "./effects.js";

/** The typed value an ask yields, or why the answer could not be used. */
export type AnswerCheck = { ok: true; value: unknown } | { ok: false; problem: string };

/**
 * Validate a client's answer against the ask it was given for. Elicitation content is checked
 * against the author's zod schema; sampling and roots results against their wire schema. zod
 * drops `__proto__` members while parsing, so nothing returned here can carry a prototype.
 */
export function checkAnswer(effect: AskEffect, answer: unknown): AnswerCheck {
  switch (effect.kind) {
    case "elicit":
    case "elicitUrl": {
      const parsed = elicitResult.safeParse(answer);
      if (!parsed.success) return { ok: false, problem: "not an elicitation result" };
      const { action } = parsed.data;
      if (action !== "accept") return { ok: true, value: { action } };
      if (effect.kind === "elicitUrl") return { ok: true, value: { action } };
      const content = effect.schema.safeParse(parsed.data.content ?? {});
      if (!content.success) return { ok: false, problem: "accepted content does not match the requested schema" };
      return { ok: true, value: { action, content: content.data } };
    }
    case "sample": {
      const parsed = createMessageResult.safeParse(answer);
      return parsed.success ? { ok: true, value: parsed.data } : { ok: false, problem: "not a sampling result" };
    }
    case "roots": {
      const parsed = listRootsResult.safeParse(answer);
      return parsed.success ? { ok: true, value: parsed.data.roots } : { ok: false, problem: "not a roots list" };
    }
  }
}
