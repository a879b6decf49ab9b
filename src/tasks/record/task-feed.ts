import { z } from "zod";
import type { Notice } from "../../store/index.js";
import { openWaits, type TaskRecord } from "./record.js";

// tasks/record/task-feed.ts owns what a task's write tells the other instances through the store's
// change feed (Store.listen): which task changed, its status, and — when nobody holds it — when
// it is due (asleep, a retry delay, a wait's deadline, a race's timer). Only changes a poller
// would see (status, message, the asks still open — what `notifications/tasks` frames carry) or
// a sweeper needs: a lease renewed or a step recorded says nothing.

/** The change-feed channel of task records. */
export const TASK_FEED = "tasks";

/** A task's change as the feed carries it: `t` its id, `s` its status, `d` when it is due unheld (store clock). */
const taskNotice = z.object({ t: z.string().min(1).max(200), s: z.string().max(20), d: z.number().finite().optional() }).strict();
export type TaskNotice = z.infer<typeof taskNotice>;

/** When a task nobody holds is due: a sleep's wake or a wait's deadline (the sweeper's due index has it too). */
const unheldDue = (r: TaskRecord): number | undefined => (r.lease === undefined && (r.status === "working" || r.status === "input_required") ? r.wake : undefined);

/** The wire keys of the asks still open (a partial answer changes them, not the status). */
const openKeysOf = (r: TaskRecord): string =>
  r.status === "input_required"
    ? openWaits(r)
        .map((w) => w.wire)
        .join("\n")
    : "";

/** The notice for the write `before` → `after`, or `undefined` when it changes nothing another instance needs to hear. */
export function taskNoticeOf(before: TaskRecord, after: TaskRecord): Notice | undefined {
  const due = unheldDue(after);
  const seen = after.status !== before.status || after.message !== before.message || due !== unheldDue(before) || openKeysOf(after) !== openKeysOf(before);
  if (!seen) return undefined;
  const notice: TaskNotice = { t: after.id, s: after.status, ...(due !== undefined ? { d: due } : {}) };
  return { channel: TASK_FEED, message: JSON.stringify(notice) };
}

/** A notice heard on the feed, checked (it comes from the store: another version, or anyone who can publish there); `undefined` if it is not one. */
export function readTaskNotice(message: string): TaskNotice | undefined {
  try {
    const parsed = taskNotice.safeParse(JSON.parse(message));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
