export * from "./input-requests.js";
export * from "./input-responses.js";
export * from "./results.js";
export * from "./params.js";
export * from "./errors.js";
export { describeZodError } from "./describe.js";
export * from "./capabilities.js";
export * from "./tasks.js";
