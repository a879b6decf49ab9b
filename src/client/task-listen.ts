import { z } from "zod";
import { sseData } from "../util/sse.js";
import { type GetTaskResult, getTaskResult } from "../wire/index.js";
import { ClientError } from "./errors.js";
import { readJsonResponse } from "./fetch-sender.js";
import type { TaskListener } from "./types.js";

// client/task-listen.ts owns hearing a task's status pushed by the server: a `subscriptions/listen`
// naming the task (`notifications.taskIds`), its frames (`notifications/tasks`, each the task as
// `tasks/get` would answer it), and how the stream ended. Following the task — what to do with
// a frame, reconnecting, polling as a backstop — is task-follow.ts's.

const SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId";

const acknowledged = z.looseObject({
  method: z.literal("notifications/subscriptions/acknowledged"),
  params: z.looseObject({ notifications: z.looseObject({ taskIds: z.array(z.string()).optional() }) }),
});
const frame = z.looseObject({ method: z.literal("notifications/tasks"), params: z.looseObject({ taskId: z.string() }) });

/** How a listen ended: `graceful` when the server closed it with the listen's result (it had nothing more to send, or shut down). */
export interface ListenEnd {
  graceful: boolean;
  /** Why it broke off, when it was not graceful. */
  error?: unknown;
}

/** An open listen: whether the server agreed to push this task, and the end of the stream. */
export interface TaskListen {
  /** The server acknowledged the task: its frames will come. `false`: it pushes nothing for it (poll). */
  pushed: boolean;
  ended: Promise<ListenEnd>;
}

/**
 * Listen for `taskId`'s status: `onTask` gets each frame, validated as a `tasks/get` result. A
 * server that refuses the listen (it does not serve it: `-32601`, `-32602`) rejects with the
 * `rpc_error`; one that acknowledges other ids only answers `pushed: false`.
 */
export async function listenToTask(listener: TaskListener, taskId: string, onTask: (task: GetTaskResult) => void, signal: AbortSignal): Promise<TaskListen> {
  const { id, response } = await listener.open("subscriptions/listen", { notifications: { taskIds: [taskId] } }, signal);
  if (!(response.headers.get("content-type") ?? "").includes("text/event-stream") || response.body === null) {
    const message = await readJsonResponse(response, id, listener.maxFrameBytes);
    await response.body?.cancel().catch(() => {});
    if ("error" in message) throw new ClientError("rpc_error", `subscriptions/listen: ${message.error.message} (${message.error.code})`, message.error);
    return { pushed: false, ended: Promise.resolve({ graceful: true }) };
  }
  const events = sseData(response.body, listener.maxFrameBytes);
  const ours = (meta: unknown) => (meta as Record<string, unknown> | undefined)?.[SUBSCRIPTION_ID_KEY] === id;
  let ack: z.infer<typeof acknowledged> | undefined;
  try {
    for (let next = await events.next(); !next.done; next = await events.next()) {
      const parsed = acknowledged.safeParse(parseJson(next.value));
      if (parsed.success && ours(parsed.data.params._meta)) {
        ack = parsed.data;
        break;
      }
    }
  } catch (error) {
    throw new ClientError("transport", `subscriptions/listen: the stream broke off before its acknowledgement: ${String(error)}`, undefined, { cause: error });
  }
  if (ack === undefined || !(ack.params.notifications.taskIds ?? []).includes(taskId)) {
    void events.return(undefined);
    return { pushed: false, ended: Promise.resolve({ graceful: true }) };
  }
  const ended = (async (): Promise<ListenEnd> => {
    try {
      for await (const data of events) {
        const message = parseJson(data) as { id?: unknown; result?: unknown } | undefined;
        if (message?.id === id && message.result !== undefined) return { graceful: true };
        const note = frame.safeParse(message);
        if (!note.success || note.data.params.taskId !== taskId || !ours(note.data.params._meta)) continue;
        const { _meta, ...fields } = note.data.params;
        const task = getTaskResult.safeParse({ ...fields, resultType: "complete" });
        if (task.success) onTask(task.data);
      }
      return { graceful: false };
    } catch (error) {
      return { graceful: false, error };
    }
  })();
  return { pushed: true, ended };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
