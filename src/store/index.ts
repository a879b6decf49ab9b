export { type FeedListener, type IndexChange, type IndexLimit, type IndexPosition, isAfter, type Listening, type Notice, type Store, StoreError, type StoreErrorReason } from "./store.js";
export { createMemoryStore, type MemoryStoreOptions } from "./memory/memory.js";
export { createStoreClock, monotonicNow, type StoreClock } from "./store-clock.js";
export { createPrincipalBytes, creditedBytes, isPrincipalByteLimit, PRINCIPAL_BYTE_LIMIT, type PrincipalBytes } from "./principal-bytes.js";
