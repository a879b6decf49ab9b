import type { GetTaskResult } from "../wire/index.js";
import { ClientError } from "./errors.js";
import { retryableRefusal } from "./retry.js";
import { listenToTask } from "./task-listen.js";
import type { TaskListener } from "./types.js";

// client/pushed-status.ts owns keeping a listen open for one task while it is followed: the
// newest frame for the follower, a listen opened again when its stream breaks off (the server
// first sends the task as it is then, so nothing is missed), and giving up on pushing — the
// follower polls — when the server does not push or listening keeps failing.

/** Listens opened again at most this many times in a row without one being acknowledged. */
const MAX_FAILED_LISTENS = 5;
/** The wait before opening a listen again: 100 ms, doubling, at most 5 s. */
const reopenDelay = (failures: number) => Math.min(5_000, 100 * 2 ** failures);

/** A task's status as the server pushes it: the newest frame not yet taken, or `undefined` when none came in time. */
export interface PushedStatus {
  /** Whether the server pushes this task's status (else the follower polls). */
  readonly live: boolean;
  /** The newest frame not yet taken; waits up to `ms` for one, `undefined` if none came (or pushing stopped). */
  next(ms: number): Promise<GetTaskResult | undefined>;
  close(): void;
}

/** Listen for `taskId` through `listener`; `undefined` when the server does not push it (the follower polls). */
export async function pushedStatus(listener: TaskListener, taskId: string, signal: AbortSignal | undefined): Promise<PushedStatus | undefined> {
  const stop = new AbortController();
  const stopped = signal === undefined ? stop.signal : AbortSignal.any([signal, stop.signal]);
  let latest: GetTaskResult | undefined;
  let wake: (() => void) | undefined;
  let live = true;
  let over = false;
  let failures = 0;
  const heard = (task: GetTaskResult) => {
    latest = task;
    over ||= isOver(task);
    wake?.();
  };
  stopped.addEventListener("abort", () => wake?.(), { once: true });
  const stopPushing = () => {
    live = false;
    wake?.();
  };

  /** Open a listen; `false` when the server does not push this task. Throws when it could not be opened. */
  async function open(): Promise<boolean> {
    const listen = await listenToTask(listener, taskId, heard, stopped);
    if (!listen.pushed) return false;
    failures = 0;
    void listen.ended.then(reopen);
    return true;
  }

  /**
   * Open a listen, again after a transport failure (a stream cut while it opened, an instance
   * going away): `false` once the server said it does not push this task — it acknowledged
   * without it, or refused the listen (an older server: `-32601`) — or listens kept failing.
   */
  async function openRetrying(): Promise<boolean> {
    for (;;) {
      if (stopped.aborted) return false;
      try {
        return await open();
      } catch (error) {
        // A refusal for good (the server does not serve listens) means polling; one the same
        // listen gets past (its store did not answer in time, under load) is tried again, as a
        // broken stream is: giving up on it turned a one-second blip into polling for the
        // task's whole life.
        if (error instanceof ClientError && error.reason === "rpc_error" && !retryableRefusal(error)) return false;
        if (++failures >= MAX_FAILED_LISTENS) return false;
      }
      await new Promise((resolve) => setTimeout(resolve, reopenDelay(failures)));
    }
  }

  /** The stream ended: open it again (another instance, if this one went away) unless the task is over or the follower stopped. */
  async function reopen(): Promise<void> {
    if (over || stopped.aborted || !live) return;
    await new Promise((resolve) => setTimeout(resolve, reopenDelay(failures)));
    if (over || stopped.aborted) return;
    if (!(await openRetrying())) stopPushing();
  }

  if (!(await openRetrying())) {
    stop.abort();
    return undefined;
  }
  return {
    get live() {
      return live;
    },
    async next(ms) {
      if (latest === undefined && live) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        await new Promise<void>((resolve) => {
          wake = resolve;
          timer = setTimeout(resolve, ms);
        });
        clearTimeout(timer);
        wake = undefined;
      }
      const task = latest;
      latest = undefined;
      return task;
    },
    close() {
      stop.abort();
      wake?.();
    },
  };
}

const isOver = (task: GetTaskResult) => task.status === "completed" || task.status === "failed" || task.status === "cancelled";
