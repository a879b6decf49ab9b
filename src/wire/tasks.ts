import { CreateTaskResultV2Schema, GetTaskRequestV2Schema, GetTaskResultV2Schema } from "@modelcontextprotocol/ext-tasks/core/v2";
import { z } from "zod";
import type { InputRequest } from "./input-requests.js";
import type { JsonRpcErrorObject } from "./errors.js";

/**
 * The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663). Validation uses the official
 * `@modelcontextprotocol/ext-tasks` schemas; the types are our own, so that no declaration of
 * that package reaches a user's type-check (its `.d.ts` needs `exactOptionalPropertyTypes`).
 */

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** A task's status: `working` and `input_required` may change; the others are final. */
export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";
/** Every status, in the order a task goes through them. */
export const TASK_STATUSES: readonly TaskStatus[] = ["working", "input_required", "completed", "failed", "cancelled"];
/** The statuses a task never leaves. */
export const TERMINAL_STATUSES: readonly TaskStatus[] = ["completed", "failed", "cancelled"];

/** What every task envelope carries. */
export interface TaskFields {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  /** ISO 8601. */
  createdAt: string;
  /** ISO 8601. */
  lastUpdatedAt: string;
  /** How long the task is kept from its creation; `null`: no limit. */
  ttlMs: number | null;
  pollIntervalMs?: number;
}

/** `CreateTaskResult`: the flat task envelope `tools/call` answers with. */
export interface CreateTaskResult extends TaskFields {
  resultType: "task";
  _meta?: Record<string, unknown>;
}

/** What `tasks/get` answers: the task with the fields of its status. */
export type GetTaskResult = TaskFields & { resultType: "complete"; _meta?: Record<string, unknown> } & (
    | { status: "working" | "cancelled" }
    | { status: "input_required"; inputRequests: Record<string, InputRequest> }
    | { status: "completed"; result: { resultType?: "complete"; content: Array<Record<string, unknown>>; structuredContent?: Record<string, unknown>; isError?: boolean; [key: string]: unknown } }
    | { status: "failed"; error: JsonRpcErrorObject }
  );

/** Validates a `CreateTaskResult` (the official schema). */
export const createTaskResult = CreateTaskResultV2Schema as unknown as z.ZodType<CreateTaskResult>;

/** Validates a `tasks/get` result (the official schema). */
export const getTaskResult = GetTaskResultV2Schema as unknown as z.ZodType<GetTaskResult>;

const taskId = GetTaskRequestV2Schema.shape.params.shape.taskId as unknown as z.ZodString;

/** `tasks/get` and `tasks/cancel` params. */
export const taskIdParams = z.looseObject({ taskId });

/**
 * `tasks/update` params. Each answer is validated against the ask it is for when the task
 * uses it; an answer under a key that is not outstanding is acknowledged and ignored, so no
 * shape is imposed on the values here.
 */
export const updateTaskParams = z.looseObject({ taskId, inputResponses: z.record(z.string(), z.unknown()) });

/** Most task ids one `subscriptions/listen` may name (more: `-32602`). */
export const MAX_LISTEN_TASK_IDS = 1000;

/**
 * `subscriptions/listen` params asking for `notifications/tasks`: `notifications.taskIds`, a
 * list of task ids (other notification kinds beside it are the SDK's to honour).
 */
export const listenTaskParams = z.looseObject({
  notifications: z.looseObject({ taskIds: z.array(taskId.min(1).max(200)).max(MAX_LISTEN_TASK_IDS) }),
});

/** `notifications/tasks` params: the task as `tasks/get` answers it, without the result's `resultType`. */
export type TaskStatusNotificationParams = Omit<GetTaskResult, "resultType">;

/** The capability object a tool that requires tasks names in `-32021`'s `requiredCapabilities`. */
export const TASKS_REQUIRED_CAPABILITIES = { extensions: { [TASKS_EXTENSION]: {} } } as const;
