import { z } from "zod";
import { inputResponses } from "./input-responses.js";

/** Request params of the three methods that may take part in a multi-round-trip call. */

/** The envelope keys every 2026-07-28 request carries in `params._meta`. */
export const PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion";
/** The `_meta` key of the client's name and version. */
export const CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo";
/** The `_meta` key of the capabilities this request declares. */
export const CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities";
/** The protocol revision this library speaks. */
export const PROTOCOL_VERSION = "2026-07-28";

/** What a client may declare; `elicitation: {}` means form mode only. */
export const clientCapabilities = z.looseObject({
  elicitation: z.looseObject({ form: z.looseObject({}).optional(), url: z.looseObject({}).optional() }).optional(),
  sampling: z.looseObject({}).optional(),
  roots: z.looseObject({}).optional(),
  /** Extensions the client supports, by id (e.g. `io.modelcontextprotocol/tasks`). */
  extensions: z.record(z.string(), z.looseObject({})).optional(),
});
/** What a client may declare. */
export type ClientCapabilities = z.infer<typeof clientCapabilities>;

const multiRound = {
  inputResponses: inputResponses.optional(),
  requestState: z.string().optional(),
  _meta: z.record(z.string(), z.unknown()).optional(),
};

/** Params of `tools/call`, with the multi-round members. */
export const callToolParams = z.looseObject({
  name: z.string(),
  arguments: z.record(z.string(), z.unknown()).optional(),
  ...multiRound,
});
/** Params of `tools/call`. */
export type CallToolParams = z.infer<typeof callToolParams>;

/** Params of `prompts/get`, with the multi-round members. */
export const getPromptParams = z.looseObject({
  name: z.string(),
  arguments: z.record(z.string(), z.string()).optional(),
  ...multiRound,
});
/** Params of `prompts/get`. */
export type GetPromptParams = z.infer<typeof getPromptParams>;

/** Params of `resources/read`, with the multi-round members. */
export const readResourceParams = z.looseObject({
  uri: z.string(),
  ...multiRound,
});
/** Params of `resources/read`. */
export type ReadResourceParams = z.infer<typeof readResourceParams>;

/** The only methods that may accept `inputResponses` and answer `input_required`. */
export const MULTI_ROUND_METHODS = ["tools/call", "prompts/get", "resources/read"] as const;
/** One of the methods that may answer `input_required`. */
export type MultiRoundMethod = (typeof MULTI_ROUND_METHODS)[number];
