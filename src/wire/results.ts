import { z } from "zod";
import { inputRequests } from "./input-requests.js";

/** The result envelopes of MCP 2026-07-28. */

const meta = z.record(z.string(), z.unknown());

/**
 * `resultType` on every result. A client treats a missing value as `"complete"` and an
 * unknown value as invalid; the tasks extension adds `"task"`.
 */
export const resultType = z.enum(["complete", "input_required", "task"]);
/** A result's `resultType`. */
export type ResultType = z.infer<typeof resultType>;

/** `InputRequiredResult`: at least one of `inputRequests` / `requestState`. */
export const inputRequiredResult = z
  .object({
    resultType: z.literal("input_required"),
    inputRequests: inputRequests.optional(),
    requestState: z.string().optional(),
    _meta: meta.optional(),
  })
  .refine((r) => r.inputRequests !== undefined || r.requestState !== undefined, {
    message: "input_required result needs inputRequests or requestState",
    path: ["inputRequests"],
  });
/** A result asking the client for input and/or carrying state. */
export type InputRequiredResult = z.infer<typeof inputRequiredResult>;

/** A content block of a tool result or prompt message (text is the common case). */
export const contentBlock = z.looseObject({ type: z.string() });
/** A content block of a tool result or prompt message. */
export type ContentBlock = z.infer<typeof contentBlock>;

/** A complete `tools/call` result. */
export const callToolResult = z.looseObject({
  resultType: z.literal("complete"),
  content: z.array(contentBlock),
  structuredContent: z.record(z.string(), z.unknown()).optional(),
  isError: z.boolean().optional(),
  _meta: meta.optional(),
});
/** A complete `tools/call` result. */
export type CallToolResult = z.infer<typeof callToolResult>;

/** One message of a prompt. */
export const promptMessage = z.looseObject({ role: z.enum(["user", "assistant"]), content: contentBlock });
/** One message of a prompt. */
export type PromptMessage = z.infer<typeof promptMessage>;

/** A complete `prompts/get` result. */
export const getPromptResult = z.looseObject({
  resultType: z.literal("complete"),
  description: z.string().optional(),
  messages: z.array(promptMessage),
  _meta: meta.optional(),
});
/** A complete `prompts/get` result. */
export type GetPromptResult = z.infer<typeof getPromptResult>;

/** One content item of a resource: text or a base64 blob. */
export const resourceContents = z.union([
  z.looseObject({ uri: z.string(), mimeType: z.string().optional(), text: z.string() }),
  z.looseObject({ uri: z.string(), mimeType: z.string().optional(), blob: z.string() }),
]);
/** One content item of a resource. */
export type ResourceContents = z.infer<typeof resourceContents>;

/** A complete `resources/read` result. */
export const readResourceResult = z.looseObject({
  resultType: z.literal("complete"),
  contents: z.array(resourceContents),
  _meta: meta.optional(),
});
/** A complete `resources/read` result. */
export type ReadResourceResult = z.infer<typeof readResourceResult>;
