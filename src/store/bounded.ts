import { StoreError } from "./store.js";

/**
 * `promise`, or a `store_unavailable` error once `ms` have passed or the client failed: the one
 * time limit a shared store's operation gets, whatever its client does (or does not) bound.
 */
export function bounded<T>(promise: Promise<T>, ms: number, service: string, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    // Rejected one event-loop turn after the timer fires, not at once: a process that was not
    // running for longer than `ms` (a long GC pause, a starved CPU) finds its timer due and the
    // reply already waiting in the socket, and libuv runs timers before it reads sockets, so an
    // answered operation failed (test/store/bounded.test.ts). setImmediate runs after that turn's reads.
    timer = setTimeout(() => setImmediate(() => reject(new StoreError("store_unavailable", `${service} did not answer ${what} within ${ms} ms`))), ms);
  });
  return Promise.race([
    promise.catch((error: unknown) => {
      if (error instanceof StoreError) throw error;
      throw new StoreError("store_unavailable", `${service} failed ${what}: ${(error as Error)?.message ?? String(error)}`, { cause: error });
    }),
    timeout,
  ]).finally(() => clearTimeout(timer));
}

/** A URL without its password, for messages. */
export function redact(url: string): string {
  return url.replace(/\/\/([^@/]*)@/, "//***@");
}
