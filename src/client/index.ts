export { callWithInput, type Send, type InputHandlers, type AskContext, type LoopOptions, type RoundInfo, type MultiRoundMethod } from "./loop.js";
export { createFetchSender, encodeHeaderValue, type FetchSenderOptions } from "./fetch-sender.js";
export { sdkSender, type SdkRequester } from "./sdk-sender.js";
export { ClientError, type ClientErrorReason } from "./errors.js";
export { followTask, type FollowOptions } from "./task-follow.js";
export type { RoundChecks } from "./answering.js";
