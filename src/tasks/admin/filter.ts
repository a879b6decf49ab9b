import { TASK_STATUSES, type TaskStatus } from "../../wire/index.js";
import { isHeld, principalDigest } from "../record/list-index.js";
import type { TaskRecord } from "../record/record.js";

export { principalDigest };

// Which tasks an operator's list or bulk action is about: one filter, checked once, for both.

/** Which tasks: every condition given must hold. */
export interface TaskFilter {
  status?: TaskStatus | readonly TaskStatus[];
  tool?: string;
  /** Who started them: the principal as it is, or its digest as `list` shows it. */
  principal?: string;
  /** Created at or after this time. */
  since?: Date;
  /** Only tasks held for an operator ("needs attention"). */
  needsAttention?: boolean;
}

/** Whether a record passes `filter` — its values checked here, once (a TypeError names a bad one). */
export function taskMatcher(filter: TaskFilter): (r: TaskRecord) => boolean {
  const statuses = filter.status === undefined ? undefined : new Set<string>(typeof filter.status === "string" ? [filter.status] : filter.status);
  for (const s of statuses ?? []) if (!(TASK_STATUSES as readonly string[]).includes(s)) throw new TypeError(`unknown status ${JSON.stringify(s)}: one of ${TASK_STATUSES.join(", ")}`);
  const since = filter.since?.getTime();
  if (since !== undefined && Number.isNaN(since)) throw new TypeError("since must be a valid Date");
  const { tool, principal, needsAttention } = filter;
  return (r) =>
    (statuses === undefined || statuses.has(r.status)) &&
    (tool === undefined || r.tool === tool) &&
    (principal === undefined || (r.principal !== undefined && (r.principal === principal || principalDigest(r.principal) === principal))) &&
    (since === undefined || r.created >= since) &&
    (needsAttention !== true || isHeld(r));
}
