import { StoreError } from "./store.js";

/**
 * `promise`, or a `store_unavailable` error once `ms` have passed or the client failed: the one
 * time limit a shared store's operation gets, whatever its client does (or does not) bound.
 */
export function bounded<T>(promise: Promise<T>, ms: number, service: string, what: string, misconfigured?: (error: unknown) => string | undefined): Promise<T> {
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
      const said = redactText((error as Error)?.message ?? String(error));
      const setting = misconfigured?.(error);
      if (setting !== undefined) throw new StoreError("store_misconfigured", `${service} refused ${what}: ${said} — ${setting}`, { cause: redacted(error) });
      throw new StoreError("store_unavailable", `${service} failed ${what}: ${said}`, { cause: redacted(error) });
    }),
    timeout,
  ]).finally(() => clearTimeout(timer));
}

/** A URL without its password (in its user part or as `password=`), for messages. */
export function redact(url: string): string {
  return redactText(url);
}

/** Text with every URL's credentials and every `password=…` parameter taken out. */
export function redactText(text: string): string {
  return text.replace(/\/\/([^@/\s]*)@/g, "//***@").replace(/(password=)[^&\s]*/gi, "$1***");
}

/** A client's error as a cause to keep: the same error, its message without passwords (a copy when it had one). */
function redacted(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const message = redactText(error.message);
  if (message === error.message) return error;
  const copy = new Error(message);
  copy.name = error.name;
  for (const key of ["code", "errno", "syscall", "severity"] as const) if (key in error) (copy as unknown as Record<string, unknown>)[key] = (error as unknown as Record<string, unknown>)[key];
  return copy;
}
