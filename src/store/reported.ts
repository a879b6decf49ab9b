import type { Store } from "./store.js";
import { StoreError } from "./store.js";

// store/reported.ts owns telling the operator when the shared store fails: a request hears
// "store unavailable, try again" (nothing more is the client's business), and the runtime's
// `onError` hears the StoreError itself — its cause, its message naming what to fix — at most
// once per distinct failure every 10 s, so an outage is seen without flooding the log.

/** How long one failure (reason and message) is not reported again. */
const QUIET_MS = 10_000;

type StoreMethod = Exclude<keyof Store, "time" | "close" | "listen" | "swapIndexed" | "addIndexed" | "getMany">;
const METHODS: readonly StoreMethod[] = ["get", "add", "swap", "set", "delete", "incr", "schedule", "unschedule", "index", "due", "size", "members"];

/** `store` whose StoreErrors are also handed to `report` (each failure at most once per 10 s, on `now`'s clock). */
export function reportingStore(store: Store, report: (error: StoreError) => void, now: () => number = Date.now): Store {
  const last = new Map<string, number>();
  const heard = (error: unknown): never => {
    if (error instanceof StoreError) {
      const key = `${error.reason}\0${error.message}`;
      const at = now();
      if ((last.get(key) ?? Number.NEGATIVE_INFINITY) + QUIET_MS <= at) {
        if (last.size > 100) last.clear();
        last.set(key, at);
        report(error);
      }
    }
    throw error;
  };
  const wrapped = Object.create(store) as Store;
  for (const name of METHODS) {
    const method = store[name] as (...args: unknown[]) => Promise<unknown>;
    (wrapped as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => method.apply(store, args).catch(heard);
  }
  if (store.getMany !== undefined) {
    const getMany = store.getMany;
    wrapped.getMany = (keys) => getMany.call(store, keys).catch(heard);
  }
  if (store.swapIndexed !== undefined) {
    const swapIndexed = store.swapIndexed;
    wrapped.swapIndexed = (...args) => swapIndexed.apply(store, args).catch(heard);
  }
  if (store.addIndexed !== undefined) {
    const addIndexed = store.addIndexed;
    wrapped.addIndexed = (...args) => addIndexed.apply(store, args).catch(heard);
  }
  if (store.time !== undefined) {
    const time = store.time;
    wrapped.time = () => time.call(store).catch(heard);
  }
  // The change feed reports its own trouble (a warning, then polling); it is not a failed operation.
  if (store.listen !== undefined) {
    const listen = store.listen;
    wrapped.listen = (channel, listener) => listen.call(store, channel, listener);
  }
  wrapped.close = () => store.close();
  return wrapped;
}
