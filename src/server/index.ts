export { register, type RegisterOptions } from "./register.js";
export { defaultPrincipal, type PrincipalOf } from "./context.js";
export { type McpFetchHandler, type TaskStatusOptions, withTaskStatus } from "./task-status.js";
