import {
  CreateTaskResultV2Schema,
  GetTaskRequestV2Schema,
  GetTaskResultV2Schema,
} from "@modelcontextprotocol/ext-tasks/core/v2";
import { z } from "zod";

/**
 * The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663). Its shapes come from the
 * official `@modelcontextprotocol/ext-tasks` package; only what it cannot express is ours.
 */

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** `CreateTaskResult`: the flat task envelope `tools/call` answers with. */
export const createTaskResult = CreateTaskResultV2Schema;
export type CreateTaskResult = z.infer<typeof CreateTaskResultV2Schema>;

/** What `tasks/get` answers: the task with its per-status fields and `resultType: "complete"`. */
export const getTaskResult = GetTaskResultV2Schema;
export type GetTaskResult = z.infer<typeof GetTaskResultV2Schema>;

export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";
export const TERMINAL_STATUSES: readonly TaskStatus[] = ["completed", "failed", "cancelled"];

const taskId = GetTaskRequestV2Schema.shape.params.shape.taskId;

/** `tasks/get` and `tasks/cancel` params. */
export const taskIdParams = z.looseObject({ taskId });

/**
 * `tasks/update` params. Each answer is validated against the ask it is for when the task
 * uses it; an answer under a key that is not outstanding is acknowledged and ignored, so no
 * shape is imposed on the values here.
 */
export const updateTaskParams = z.looseObject({ taskId, inputResponses: z.record(z.string(), z.unknown()) });

/** The capability object a tool that requires tasks names in `-32021`'s `requiredCapabilities`. */
export const TASKS_REQUIRED_CAPABILITIES = { extensions: { [TASKS_EXTENSION]: {} } } as const;
