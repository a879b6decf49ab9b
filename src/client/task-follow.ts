import { type CreateTaskResult, describeZodError, type GetTaskResult, getTaskResult, type InputRequest } from "../wire/index.js";
import { answerRound, type RoundChecks } from "./answering.js";
import { ClientError } from "./errors.js";
import { pushedStatus } from "./pushed-status.js";
import { sendRetrying } from "./retry.js";
import type { InputHandlers, Send } from "./types.js";

/** Options of `followTask`: the round checks, a cap on input exchanges, and a progress callback. */
export interface FollowOptions extends Omit<RoundChecks, "what"> {
  /** Give up after this many input exchanges. */
  maxRounds: number;
  onTask: ((task: GetTaskResult) => void) | undefined;
  /** The least time between polls, whatever the server suggests. */
  minPollMs: number;
  /** How often a `tasks/get` or `tasks/update` is sent again when the server says a repeat gets past its failure (`store_unavailable`, ...). Default 2. */
  retries?: number;
  /** Aborts when the caller's deadline passed (then the error says `deadline`, not `aborted`). */
  deadline: AbortSignal | undefined;
  /** Hear the task's status pushed (`subscriptions/listen`) when the sender can and the server does. Default true. */
  listen?: boolean;
}

/** Suggested when the server names no interval (what the official requester uses too). */
const DEFAULT_POLL_MS = 1000;
/** While the server pushes the task's status, `tasks/get` only when no frame came for this long (or 10 poll intervals, if longer). */
const BACKSTOP_POLL_MS = 10_000;

/** Wait `ms`, or reject when `signal` aborts; the listener is removed either way (a long poll adds none up). */
function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const abort = () => (clearTimeout(timer), reject(signal!.reason));
    const timer = setTimeout(() => (signal?.removeEventListener("abort", abort), resolve()), ms);
    signal?.addEventListener("abort", abort, { once: true });
  });
}

/**
 * Follow a task the server created: poll `tasks/get` at the server's `pollIntervalMs`, answer
 * its `input_required` asks with the same handlers (and checks) as plain rounds through
 * `tasks/update`, and return the completed task's result. A failed task throws `task_failed`
 * (with the server's error), a cancelled one `task_cancelled`; aborting the caller's signal
 * sends `tasks/cancel` and throws `aborted`.
 */
export async function followTask<R>(send: Send, created: CreateTaskResult, handlers: InputHandlers, options: FollowOptions): Promise<R> {
  const { taskId } = created;
  const floor = (ms: number) => Math.max(ms, options.minPollMs);
  let interval = floor(created.pollIntervalMs ?? DEFAULT_POLL_MS);
  const answered = new Set<string>();
  let exchanges = 0;
  const abandon = async (): Promise<never> => {
    await send("tasks/cancel", { taskId }).catch(() => {});
    if (options.deadline?.aborted) throw new ClientError("deadline", `task ${taskId} did not end within the caller's deadline (tasks/cancel sent)`);
    throw new ClientError("aborted", `task ${taskId} was abandoned: the caller aborted (tasks/cancel sent)`);
  };
  // A store blip while the task runs (a failover, a pooler logging in again) is ridden out as the
  // server says: the same request again, after a backoff, up to `retries` times.
  const call = (method: string, params: Record<string, unknown>) =>
    sendRetrying(send, method, params, { retries: options.retries ?? 2, keyed: false, signal: options.signal }).catch((error: unknown) => {
      if (options.signal?.aborted) return abandon();
      throw error;
    });
  // Pushed status when the sender can listen and the server pushes this task: then `tasks/get`
  // only as a slow backstop (a frame lost, a listen that cannot be opened again).
  const pushed = options.listen !== false && send.listener !== undefined ? await pushedStatus(send.listener, taskId, options.signal) : undefined;
  try {
    return await follow();
  } finally {
    pushed?.close();
  }

  async function follow(): Promise<R> {
    for (;;) {
      if (options.signal?.aborted) return abandon();
      const heard = pushed?.live ? await pushed.next(Math.max(BACKSTOP_POLL_MS, 10 * interval)) : undefined;
      if (options.signal?.aborted) return abandon();
      let task: GetTaskResult;
      if (heard !== undefined) task = heard;
      else {
        const parsed = getTaskResult.safeParse(await call("tasks/get", { taskId }));
        if (!parsed.success) throw new ClientError("invalid_result", `invalid tasks/get result: ${describeZodError(parsed.error)}`);
        task = parsed.data;
      }
      options.onTask?.(task);
      interval = floor(task.pollIntervalMs ?? interval);
      switch (task.status) {
        case "completed":
          return task.result as R;
        case "failed":
          throw new ClientError("task_failed", `task ${taskId} failed: ${task.error.message} (${task.error.code})`, task.error);
        case "cancelled":
          throw new ClientError("task_cancelled", `task ${taskId} was cancelled`);
        case "input_required": {
          // Keys are unique for a task's life: one already answered is never answered again.
          const asks = Object.entries(task.inputRequests as Record<string, InputRequest>).filter(([key]) => !answered.has(key));
          if (asks.length === 0) break;
          if (++exchanges > options.maxRounds) throw new ClientError("round_limit", `task ${taskId} still needed input after ${options.maxRounds} exchanges; giving up`);
          const answers = await answerRound(asks, handlers, exchanges, { ...options, what: `task ${taskId}` });
          for (const key of Object.keys(answers)) answered.add(key);
          await call("tasks/update", { taskId, inputResponses: answers });
          continue; // look again at once: the answers may have been all it needed
        }
      }
      if (pushed?.live) continue; // the next frame, or the backstop's poll
      try {
        await delay(interval, options.signal);
      } catch {
        return abandon();
      }
    }
  }
}
