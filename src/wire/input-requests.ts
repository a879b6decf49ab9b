import { z } from "zod";

/**
 * The embedded requests a server may place in `inputRequests` (MCP 2026-07-28, SEP-2322):
 * bare `{ method, params }` objects — no `jsonrpc`, no `id`.
 */

const meta = z.record(z.string(), z.unknown());

/** One field of an elicitation form: the restricted JSON Schema subset elicitation allows. */
export const primitiveSchemaDefinition = z.union([
  z.looseObject({
    type: z.literal("string"),
    title: z.string().optional(),
    description: z.string().optional(),
    minLength: z.number().int().nonnegative().optional(),
    maxLength: z.number().int().nonnegative().optional(),
    format: z.enum(["email", "uri", "date", "date-time"]).optional(),
    enum: z.array(z.string()).optional(),
    enumNames: z.array(z.string()).optional(),
    oneOf: z.array(z.object({ const: z.string(), title: z.string() })).optional(),
    default: z.string().optional(),
  }),
  z.looseObject({
    type: z.enum(["number", "integer"]),
    title: z.string().optional(),
    description: z.string().optional(),
    minimum: z.number().optional(),
    maximum: z.number().optional(),
    default: z.number().optional(),
  }),
  z.looseObject({
    type: z.literal("boolean"),
    title: z.string().optional(),
    description: z.string().optional(),
    default: z.boolean().optional(),
  }),
  z.looseObject({
    type: z.literal("array"),
    title: z.string().optional(),
    description: z.string().optional(),
    minItems: z.number().int().nonnegative().optional(),
    maxItems: z.number().int().nonnegative().optional(),
    items: z.union([z.object({ type: z.literal("string"), enum: z.array(z.string()) }), z.object({ anyOf: z.array(z.object({ const: z.string(), title: z.string() })) })]),
    default: z.array(z.string()).optional(),
  }),
]);
/** One field of an elicitation form. */
export type PrimitiveSchemaDefinition = z.infer<typeof primitiveSchemaDefinition>;

/** `requestedSchema` of a form elicitation: a flat object of primitive fields. */
export const requestedSchema = z.looseObject({
  type: z.literal("object"),
  properties: z.record(z.string(), primitiveSchemaDefinition),
  required: z.array(z.string()).optional(),
});
/** The `requestedSchema` of a form elicitation. */
export type RequestedSchema = z.infer<typeof requestedSchema>;

/** Params of a form elicitation (`elicitation/create`, mode `form`). */
export const elicitFormParams = z.looseObject({
  mode: z.literal("form").optional(),
  message: z.string(),
  requestedSchema,
  _meta: meta.optional(),
});
/** Params of a form elicitation. */
export type ElicitFormParams = z.infer<typeof elicitFormParams>;

/** Params of a URL elicitation (`elicitation/create`, mode `url`). */
export const elicitUrlParams = z.looseObject({
  mode: z.literal("url"),
  message: z.string(),
  url: z.url(),
  _meta: meta.optional(),
});
/** Params of a URL elicitation. */
export type ElicitUrlParams = z.infer<typeof elicitUrlParams>;

const textContent = z.looseObject({ type: z.literal("text"), text: z.string() });
const imageContent = z.looseObject({ type: z.literal("image"), data: z.string(), mimeType: z.string() });
const audioContent = z.looseObject({ type: z.literal("audio"), data: z.string(), mimeType: z.string() });
/** Content of a sampling message or result (text, image, audio; tool content passes through loosely). */
export const samplingContent = z.union([textContent, imageContent, audioContent, z.looseObject({ type: z.enum(["tool_use", "tool_result"]) })]);
/** A content block of a sampling message or result. */
export type SamplingContent = z.infer<typeof samplingContent>;

/** Who speaks in a sampling message. */
export const role = z.enum(["user", "assistant"]);

/** One message of a sampling request. */
export const samplingMessage = z.looseObject({
  role,
  content: z.union([samplingContent, z.array(samplingContent)]),
});
/** One message of a sampling request. */
export type SamplingMessage = z.infer<typeof samplingMessage>;

/** Params of `sampling/createMessage`. */
export const createMessageParams = z.looseObject({
  messages: z.array(samplingMessage),
  maxTokens: z.number().int().positive(),
  systemPrompt: z.string().optional(),
  temperature: z.number().optional(),
  stopSequences: z.array(z.string()).optional(),
  includeContext: z.enum(["none", "thisServer", "allServers"]).optional(),
  modelPreferences: z.looseObject({}).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  _meta: meta.optional(),
});
/** Params of `sampling/createMessage`. */
export type CreateMessageParams = z.infer<typeof createMessageParams>;

/** An `inputRequests` entry asking for an elicitation. */
export const elicitInputRequest = z.object({
  method: z.literal("elicitation/create"),
  params: z.union([elicitUrlParams, elicitFormParams]),
});
/** An `inputRequests` entry asking the client's model for a completion. */
export const samplingInputRequest = z.object({
  method: z.literal("sampling/createMessage"),
  params: createMessageParams,
});
/** An `inputRequests` entry asking for the client's roots. */
export const rootsInputRequest = z.object({
  method: z.literal("roots/list"),
  params: z.looseObject({ _meta: meta.optional() }).optional(),
});

/** One entry of `inputRequests`. */
export const inputRequest = z.discriminatedUnion("method", [elicitInputRequest, samplingInputRequest, rootsInputRequest]);
/** One entry of `inputRequests`. */
export type InputRequest = z.infer<typeof inputRequest>;

/** `inputRequests`: server-chosen key → bare request. */
export const inputRequests = z.record(z.string(), inputRequest);
/** `inputRequests`: server-chosen key → bare request. */
export type InputRequests = z.infer<typeof inputRequests>;
