import { z } from "zod";
import type { CallToolResult, GetPromptResult, PromptMessage, ReadResourceResult, ResourceContents } from "../wire/index.js";
import { contentBlock, promptMessage, resourceContents } from "../wire/index.js";
import { isPlainJson } from "../state/value-text.js";
import { type PromptDefinition, type ToolDefinition, isToolError } from "./definitions.js";

/** Author code returned something the definition does not allow; reported through onError. */
export class ResultShapeError extends TypeError {
  override readonly name = "ResultShapeError";
}

const text = (t: string) => ({ type: "text", text: t });

/** A tool result that reports failure to the model without leaking internals. */
export function errorToolResult(message: string): CallToolResult {
  return { resultType: "complete", content: [text(message)], isError: true };
}

const toolContent = z.object({
  content: z.array(contentBlock),
  structuredContent: z.record(z.string(), z.unknown()).optional(),
  isError: z.boolean().optional(),
});

/** Shape what a tool's run returned: string → text; toolError → isError; `output` → structured. */
export function shapeToolResult(def: ToolDefinition, value: unknown): CallToolResult {
  if (isToolError(value)) return errorToolResult(value.message);
  if (def.output) {
    let parsed: ReturnType<z.ZodType["safeParse"]>;
    try {
      parsed = def.output.safeParse(value);
    } catch (error) {
      throw new ResultShapeError(`tool "${def.name}": its output schema threw while checking the result: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    if (!parsed.success) throw new ResultShapeError(`tool "${def.name}" returned a value that does not match its output schema: ${parsed.error.message}`);
    const structured = jsonOnly(def, parsed.data, "structured output") as Record<string, unknown>;
    return { resultType: "complete", content: [text(JSON.stringify(structured))], structuredContent: structured };
  }
  if (typeof value === "string") return { resultType: "complete", content: [text(value)] };
  const parsed = toolContent.safeParse(value);
  if (parsed.success) return { resultType: "complete", ...(jsonOnly(def, parsed.data, "result") as typeof parsed.data) };
  throw new ResultShapeError(`tool "${def.name}" must return a string, toolError(...) or { content: [...] }`);
}

/** A result goes out as JSON: anything JSON would drop or refuse (a bigint, a Date, undefined in an array) is the author's mistake, named. */
function jsonOnly(def: ToolDefinition, value: unknown, what: string): unknown {
  if (!isPlainJson(value))
    throw new ResultShapeError(`tool "${def.name}" returned ${what} that JSON cannot carry as it is (a bigint, Date, Map, undefined, NaN or a class instance): return plain JSON`);
  return value;
}

const promptShape = z.union([z.string(), z.array(promptMessage), z.object({ description: z.string().optional(), messages: z.array(promptMessage) })]);

/** Shape what a prompt's run returned: string → one user text message. */
export function shapePromptResult(def: PromptDefinition, value: unknown): GetPromptResult {
  const parsed = promptShape.safeParse(value);
  if (!parsed.success) throw new ResultShapeError(`prompt "${def.name}" must return a string, messages, or { messages }`);
  const v = parsed.data;
  if (typeof v === "string") return { resultType: "complete", description: def.description, messages: [{ role: "user", content: text(v) }] };
  const messages: PromptMessage[] = Array.isArray(v) ? v : v.messages;
  const description = Array.isArray(v) ? def.description : (v.description ?? def.description);
  return { resultType: "complete", description, messages };
}

const resourceShape = z.union([z.string(), z.array(resourceContents), z.object({ contents: z.array(resourceContents) })]);

/** Shape what a resource's run returned: string → one text content at the resource's uri. */
export function shapeResourceResult(def: { mimeType: string | undefined }, uri: string, value: unknown): ReadResourceResult {
  const parsed = resourceShape.safeParse(value);
  if (!parsed.success) throw new ResultShapeError(`resource "${uri}" must return a string, contents, or { contents }`);
  const v = parsed.data;
  const contents: ResourceContents[] = typeof v === "string" ? [{ uri, ...(def.mimeType ? { mimeType: def.mimeType } : {}), text: v }] : Array.isArray(v) ? v : v.contents;
  return { resultType: "complete", contents };
}
