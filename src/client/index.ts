export { callWithInput } from "./loop.js";
export type { Send, InputHandlers, AskContext, ElicitParams, LoopOptions, RoundInfo, OpenRequest, TaskListener } from "./types.js";
export type { MultiRoundMethod } from "../wire/index.js";
export { createFetchSender, encodeHeaderValue, type FetchSenderOptions } from "./fetch-sender.js";
export { sdkSender, type SdkRequester } from "./sdk-sender.js";
export { createTaskDispatch, type TaskDispatch, type DispatchResponse, type JsonValue } from "./task-dispatch.js";
export { ClientError, type ClientErrorReason } from "./errors.js";
export { followTask, type FollowOptions } from "./task-follow.js";
export type { RoundChecks } from "./answering.js";
