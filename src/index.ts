// `mcp-yield`: what a tool author and a server's host use. Every name is listed on purpose (no
// `export *`): a change here is a change to the package's public surface, and
// test/architecture/exports.test.ts holds the list. Internals tests need come from
// `src/internal.ts`, which is not in package.json `exports`.

// What a tool author writes: definitions, effects, form schemas, uri templates.
export {
  tool,
  prompt,
  resource,
  resourceTemplate,
  toolError,
  isToolError,
  type ToolDefinition,
  type CodeVersions,
  type PromptDefinition,
  type ResourceDefinition,
  type ResourceTemplateDefinition,
  type ResourceTemplateSpec,
  type Definition,
  type RunContext,
  type RunGenerator,
  type Capability,
  type PromptArgument,
  type PromptReturn,
  type ResourceReturn,
  type ToolContent,
  type ToolError,
  type TaskSupport,
  type TaskFailure,
  type TaskFrom,
  type IdempotencyContext,
  type ToolReturn,
} from "./authoring/definitions.js";
export {
  elicit,
  elicitUrl,
  sample,
  listRoots,
  step,
  now,
  uuid,
  runAsTask,
  patched,
  sleep,
  progress,
  waitForSignal,
  NonRetryableError,
  StepFailedError,
  form,
  type Effect,
  type AskEffect,
  type ElicitEffect,
  type ElicitUrlEffect,
  type SampleEffect,
  type RootsEffect,
  type StepEffect,
  type NowEffect,
  type UuidEffect,
  type AllEffect,
  type TaskEffect,
  type PatchEffect,
  type SleepEffect,
  type AttemptEffect,
  type AttemptOutcome,
  type ProgressEffect,
  type SignalEffect,
  type SignalOutcome,
  type StepOptions,
  type RetryOptions,
  type RaceEffect,
  type RaceBranch,
  type RaceBranchEffect,
  type ParallelEffect,
  type Ask,
  type Op,
  type AskOptions,
  type ElicitOutcome,
  type ElicitUrlOutcome,
} from "./authoring/effects.js";
export { all, race, type AllOptions, type AskResult, type OpResult, type RaceResult } from "./authoring/combinators.js";
export { ElicitationSchemaError, toRequestedSchema, type FormSchema } from "./authoring/elicitation-schema.js";
export type { CompiledUriTemplate, TemplateVariableNames, TemplateVariables } from "./authoring/uri-template.js";

// The runtime a host creates, its errors and what it reports.
export { createSignalHandler, type SignalHandlerOptions } from "./server/signal-handler.js";
export {
  createRuntime,
  type Runtime,
  type RuntimeOptions,
  type RuntimeLimits,
  type RequestInfo,
  type ErrorInfo,
  type ToolCallResult,
  type PromptGetResult,
  type ResourceReadResult,
  type TaskAck,
} from "./runtime/runtime.js";
export type { TaskOptions } from "./tasks/types.js";
export type { SignalDelivered } from "./tasks/signals.js";
export type { TaskWatchHandle, TaskWatchSink } from "./tasks/watch.js";
export { createTaskAdmin, type BulkOutcome, type TaskAdmin, type TaskDetail, type TaskListOptions, type TaskPage, type TaskSummary } from "./tasks/admin/admin.js";
export type { TaskFilter } from "./tasks/admin/filter.js";
export { fixtureFromState, type JournalFixture } from "./journal/fixture.js";
export { DivergenceError, MissingCapabilityError, NondeterminismError } from "./replay/errors.js";
export type { StepRun } from "./replay/round/round.js";
export { formatRoundTrace, type RoundTrace, type RoundPath, type RoundOutcomeKind } from "./runtime/trace.js";
export { formatStateReport, inspectState, type InspectedRecord, type StateReport } from "./journal/inspect.js";

// The requestState codec and its keys.
export { createStateCodec, type InspectedState, type MintedState, type StateCodec, type StateCodecOptions, type StateMode } from "./state/token/codec.js";
export { StateError, StateConfigError, type StateErrorReason } from "./state/errors.js";
export { parseKeyRing, type StateKey, MIN_SECRET_BYTES } from "./state/token/keyring.js";
export type { StateBinding, OpenedState } from "./state/token/claims.js";
export { UnsupportedValueError } from "./state/value-text.js";

// Stores shared by instances (Redis: `mcp-yield/redis`).
export { type FeedListener, type IndexChange, type IndexLimit, type IndexPosition, type Listening, type Notice, type Store, StoreError, type StoreErrorReason } from "./store/store.js";
export { createMemoryStore, type MemoryStoreOptions } from "./store/memory/memory.js";

// The protocol's error type and codes (author code throws ProtocolError on purpose), and the
// wire types the runtime's methods take and answer. The wire's zod schemas and constants are
// the `mcp-yield/wire` entry.
export { ErrorCode, ProtocolError, type JsonRpcErrorObject } from "./wire/errors.js";
export type { ClientCapabilities, MultiRoundMethod, CallToolParams, GetPromptParams, ReadResourceParams } from "./wire/params.js";
export type {
  InputRequest,
  InputRequests,
  ElicitFormParams,
  ElicitUrlParams,
  CreateMessageParams,
  RequestedSchema,
  PrimitiveSchemaDefinition,
  SamplingMessage,
  SamplingContent,
} from "./wire/input-requests.js";
export type { InputResponses, ElicitResult, CreateMessageResult, ListRootsResult, Root } from "./wire/input-responses.js";
export type { CallToolResult, GetPromptResult, ReadResourceResult, InputRequiredResult, ContentBlock, PromptMessage, ResourceContents, ResultType } from "./wire/results.js";
export type { CreateTaskResult, GetTaskResult, TaskFields, TaskStatus } from "./wire/tasks.js";
