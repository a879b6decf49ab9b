import type { CallToolParams, ElicitResult, GetPromptParams, ReadResourceParams } from "./index.js";

/**
 * Request params and elicitation answers read by hand when they are plainly valid — the case
 * of every well-behaved client, every round. zod then runs only for what this check declines,
 * so anything unusual still gets zod's verdict and its precise error. What is accepted here is
 * a strict subset of what the zod schemas in wire/ accept, and read the same way (a property
 * test holds the two together): zod took ≈ 1 µs of each round.
 */

/** An object zod's `z.record` would copy unchanged: as JSON.parse makes them, no keys it treats specially. */
function isPlainRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  return Object.getPrototypeOf(value) === Object.prototype && !Object.hasOwn(value, "constructor") && !Object.hasOwn(value, "__proto__") && Object.getOwnPropertySymbols(value).length === 0;
}

/**
 * A params object (a zod `looseObject`, which reads its members by name and ignores symbol
 * keys and a `__proto__` member): any object as JSON.parse makes them.
 */
const isPlainParams = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype;

const optionalRecord = (value: unknown) => value === undefined || isPlainRecord(value);

/** The members every multi-round request may carry, each absent or of its plain shape. */
function plainMultiRound(p: Record<string, unknown>): boolean {
  return optionalRecord(p.inputResponses) && (p.requestState === undefined || typeof p.requestState === "string") && optionalRecord(p._meta);
}

/** `tools/call` params, or `undefined` to let zod decide. */
export function plainCallToolParams(raw: unknown): CallToolParams | undefined {
  if (!isPlainParams(raw) || typeof raw.name !== "string" || !optionalRecord(raw.arguments) || !plainMultiRound(raw)) return undefined;
  return raw as CallToolParams;
}

/** `prompts/get` params (string arguments), or `undefined` to let zod decide. */
export function plainGetPromptParams(raw: unknown): GetPromptParams | undefined {
  if (!isPlainParams(raw) || typeof raw.name !== "string" || !plainMultiRound(raw)) return undefined;
  const args = raw.arguments;
  if (args !== undefined && !(isPlainRecord(args) && Object.values(args).every((v) => typeof v === "string"))) return undefined;
  return raw as GetPromptParams;
}

/** `resources/read` params, or `undefined` to let zod decide. */
export function plainReadResourceParams(raw: unknown): ReadResourceParams | undefined {
  if (!isPlainParams(raw) || typeof raw.uri !== "string" || !plainMultiRound(raw)) return undefined;
  return raw as ReadResourceParams;
}

const ACTIONS = new Set(["accept", "decline", "cancel"]);

/** A form field's value as `elicitValue` accepts it. */
function isPlainFieldValue(v: unknown): boolean {
  switch (typeof v) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(v);
    default:
      if (!Array.isArray(v) || Object.getPrototypeOf(v) !== Array.prototype) return false;
      for (let i = 0; i < v.length; i++) if (typeof v[i] !== "string") return false;
      return true;
  }
}

/** An elicitation answer (`elicitResult`), or `undefined` to let zod decide. */
export function plainElicitResult(raw: unknown): ElicitResult | undefined {
  if (!isPlainParams(raw) || typeof raw.action !== "string" || !ACTIONS.has(raw.action) || !optionalRecord(raw._meta)) return undefined;
  const content = raw.content;
  if (content !== undefined) {
    if (!isPlainRecord(content)) return undefined;
    for (const key in content) if (!isPlainFieldValue(content[key])) return undefined;
  }
  return raw as ElicitResult;
}
