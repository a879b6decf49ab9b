export { type Store, StoreError, type StoreErrorReason } from "./store.js";
export { createMemoryStore, type MemoryStoreOptions } from "./memory.js";
