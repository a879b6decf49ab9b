// `mcp-yield/wire`: the 2026-07-28 multi round-trip shapes and the tasks extension's, as zod
// schemas with the types inferred from them, the protocol's constants, and its error type and
// codes — for hosts and clients that read or check the wire themselves. Every name is listed on
// purpose (test/architecture/exports.test.ts holds the list).

export { ErrorCode, ProtocolError, type JsonRpcErrorObject } from "./wire/errors.js";
export {
  PROTOCOL_VERSION,
  CLIENT_CAPABILITIES_KEY,
  MULTI_ROUND_METHODS,
  clientCapabilities,
  callToolParams,
  getPromptParams,
  readResourceParams,
  type ClientCapabilities,
  type MultiRoundMethod,
  type CallToolParams,
  type GetPromptParams,
  type ReadResourceParams,
} from "./wire/params.js";
export {
  primitiveSchemaDefinition,
  requestedSchema,
  elicitFormParams,
  elicitUrlParams,
  samplingContent,
  samplingMessage,
  createMessageParams,
  inputRequest,
  inputRequests,
  type InputRequest,
  type InputRequests,
  type ElicitFormParams,
  type ElicitUrlParams,
  type CreateMessageParams,
  type RequestedSchema,
  type PrimitiveSchemaDefinition,
  type SamplingMessage,
  type SamplingContent,
} from "./wire/input-requests.js";
export {
  elicitResult,
  createMessageResult,
  root,
  listRootsResult,
  inputResponses,
  type InputResponses,
  type ElicitResult,
  type CreateMessageResult,
  type ListRootsResult,
  type Root,
} from "./wire/input-responses.js";
export {
  resultType,
  inputRequiredResult,
  contentBlock,
  callToolResult,
  promptMessage,
  getPromptResult,
  resourceContents,
  readResourceResult,
  type CallToolResult,
  type GetPromptResult,
  type ReadResourceResult,
  type InputRequiredResult,
  type ContentBlock,
  type PromptMessage,
  type ResourceContents,
  type ResultType,
} from "./wire/results.js";
export { TASKS_EXTENSION, createTaskResult, getTaskResult, type CreateTaskResult, type GetTaskResult, type TaskFields, type TaskStatus } from "./wire/tasks.js";
