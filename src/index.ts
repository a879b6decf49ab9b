export * from "./wire/index.js";
export * from "./state/index.js";
export * from "./runtime/index.js";
export * from "./store/index.js";
