import { digestOf } from "../../state/index.js";
import type { IndexChange, Store } from "../../store/index.js";
import type { TaskStatus } from "../../wire/index.js";
import { isTerminal, type TaskRecord } from "./record.js";

// Where an operator's list finds the tasks a filter names without reading every task: indexes
// by creation time — all tasks, per tool, per principal, per status, the held ones — kept in
// step with the records (record-store.ts moves a task between the status ones as it changes,
// the sweeper takes it out of all of them when it is gone). The list reads the narrowest index
// its filter names and checks each record it reads, so an entry left behind costs a look,
// never a wrong row.

/** Every task, by creation. */
export const LIST_ALL = "task-list:all";
/** The held tasks ("needs attention"). */
export const LIST_HELD = "task-list:held";
export const listByTool = (tool: string): string => `task-list:tool:${tool}`;
/** By the principal's digest as the list shows it. */
export const listByPrincipal = (digest: string): string => `task-list:principal:${digest}`;
export const listByStatus = (status: TaskStatus): string => `task-list:status:${status}`;

/** The digest a list shows for a principal (the first 16 characters of its SHA-256, base64url). */
export const principalDigest = (principal: string): string => digestOf(principal).slice(0, 16);

/** A task held for an operator ("needs attention"). */
export const isHeld = (r: TaskRecord): boolean => r.status === "working" && r.held !== undefined;

/** The indexes that change with the record: its status, and whether it is held. */
const changingIndexesOf = (r: TaskRecord): string[] => [listByStatus(r.status), ...(isHeld(r) ? [LIST_HELD] : [])];

/** Every list index a record belongs in now. */
export function listIndexesOf(r: TaskRecord): string[] {
  return [LIST_ALL, listByTool(r.tool), ...(r.principal !== undefined ? [listByPrincipal(principalDigest(r.principal))] : []), ...changingIndexesOf(r)];
}

/** The entries putting `r` into every list index it belongs in (at its creation time). */
export const listEntriesOf = (r: TaskRecord): IndexChange[] => listIndexesOf(r).map((index) => ({ index, member: r.id, at: r.created }));

/**
 * After a write changed `before` into `after`: into the indexes it now belongs in, out of those
 * it left — with `extra` changes (the due index). `left`: the indexes it left that it can enter
 * again (see `putBack`).
 */
export function listChanges(before: TaskRecord, after: TaskRecord, extra: IndexChange[] = []): { changes: IndexChange[]; left: string[] } {
  const was = changingIndexesOf(before);
  const is = changingIndexesOf(after);
  const left = was.filter((index) => !is.includes(index));
  const changes: IndexChange[] = [
    ...extra,
    ...is.filter((index) => !was.includes(index)).map((index) => ({ index, member: after.id, at: after.created })),
    ...left.map((index) => ({ index, member: after.id, at: null })),
  ];
  return { changes, left: isTerminal(after.status) ? [] : left };
}

/**
 * Two writers may move one task at once (their index writes interleave), so a removal from an
 * index the task can enter again is followed by a read of the record: if the task is back in
 * that index by then, it is put back — an entry may be left over, never missing. A task that
 * ended cannot enter another index again: no read then (`listChanges` leaves `left` empty).
 */
export async function putBack(store: Store, left: string[], reload: () => Promise<TaskRecord | undefined>): Promise<void> {
  if (left.length === 0) return;
  const now = await reload();
  if (now === undefined) return;
  const back = changingIndexesOf(now).filter((index) => left.includes(index));
  if (back.length > 0) await store.index(back.map((index) => ({ index, member: now.id, at: now.created })));
}

/**
 * `listChanges`, sent as one store operation after the write, then `putBack`. A batch of
 * removals only that fails leaves entries behind (a look for the list, not a failed
 * transition); one that adds throws.
 */
export async function moveInList(store: Store, before: TaskRecord, after: TaskRecord, reload: () => Promise<TaskRecord | undefined>, extra: IndexChange[] = []): Promise<void> {
  const { changes, left } = listChanges(before, after, extra);
  if (changes.length === 0) return;
  if (changes.some((c) => c.at !== null)) await store.index(changes);
  else await store.index(changes).catch(() => {});
  await putBack(store, left, reload);
}

/** A task that is gone, out of every list index its record named (entries a race left elsewhere are dropped when a list reads them). */
export const listRemovalsOf = (r: TaskRecord): IndexChange[] => listIndexesOf(r).map((index) => ({ index, member: r.id, at: null }));
