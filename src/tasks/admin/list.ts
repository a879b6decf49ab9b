import { z } from "zod";
import { decodeBase64url, encodeTextBase64url } from "../../state/base64url.js";
import { type IndexPosition, isAfter, type Store } from "../../store/index.js";
import type { TaskFilter } from "./filter.js";
import { LIST_ALL, LIST_HELD, listByPrincipal, listByStatus, listByTool, principalDigest } from "../record/list-index.js";
import type { TaskRecord } from "../record/record.js";

// Finding the tasks a filter selects, a page at a time: through the narrowest list index the
// filter names (record/list-index.ts), from a cursor — never a scan of every task when the
// filter names a tool, a principal, a status or held tasks, and never an offset.

/** Entries read from an index at a time (and records read together). */
const PAGE = 200;

/**
 * The indexes a filter reads: one group per condition it names (held tasks, a principal, a
 * tool, statuses), every group's task in the list, any index of a group enough (a status of
 * several, a principal given as it is or as a digest). No condition: every task.
 */
export function indexesFor(filter: TaskFilter): string[][] {
  const groups: string[][] = [];
  if (filter.needsAttention === true) groups.push([LIST_HELD]);
  // The principal as it is, or a digest as the list shows it: both read, the record decides.
  if (filter.principal !== undefined) groups.push([...new Set([listByPrincipal(principalDigest(filter.principal)), listByPrincipal(filter.principal)])]);
  if (filter.tool !== undefined) groups.push([listByTool(filter.tool)]);
  if (filter.status !== undefined) groups.push([...new Set(typeof filter.status === "string" ? [filter.status] : filter.status)].map(listByStatus));
  return groups.length > 0 ? groups : [[LIST_ALL]];
}

const cursorText = z.tuple([z.number().finite(), z.string().min(1).max(200)]);

/** A page's cursor: where the list stopped (the last task's creation time and id), as text. */
export const encodeCursor = (at: IndexPosition): string => encodeTextBase64url(JSON.stringify([at.at, at.member]));

/** The position a cursor names; a TypeError for text no list gave. */
export function decodeCursor(cursor: string): IndexPosition {
  let parsed: unknown;
  try {
    const bytes = decodeBase64url(cursor);
    parsed = bytes === undefined ? undefined : JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    parsed = undefined;
  }
  const checked = cursorText.safeParse(parsed);
  if (!checked.success) throw new TypeError(`not a cursor a task list gave: ${JSON.stringify(cursor.length > 60 ? `${cursor.slice(0, 60)}…` : cursor)}`);
  return { at: checked.data[0], member: checked.data[1] };
}

/** One index read forward page by page, able to skip ahead to a position (a cursor read from there). */
class IndexReader {
  private buffer: IndexPosition[] = [];
  private fetchedTo: IndexPosition | undefined;
  private exhausted = false;
  constructor(
    private readonly store: Store,
    readonly index: string,
  ) {}

  /** The first entry at `target` or after it (`strict`: after it only); `undefined` when there is none. */
  async seek(target: IndexPosition | undefined, strict: boolean): Promise<IndexPosition | undefined> {
    const behind = (e: IndexPosition) => target !== undefined && (isAfter(target, e) || (strict && e.at === target.at && e.member === target.member));
    for (;;) {
      while (this.buffer.length > 0 && behind(this.buffer[0]!)) this.buffer.shift();
      if (this.buffer.length > 0) return this.buffer[0];
      if (this.exhausted) return undefined;
      // Past what was read: a cursor read from the target's time (its ties stepped over above).
      const from = target !== undefined && (this.fetchedTo === undefined || isAfter(target, this.fetchedTo)) ? { at: target.at, member: "" } : this.fetchedTo;
      this.buffer = await this.store.members(this.index, PAGE, from);
      if (this.buffer.length < PAGE) this.exhausted = true;
      if (this.buffer.length > 0) this.fetchedTo = this.buffer.at(-1);
    }
  }
}

/** The first entry at or after `target` in any of `readers` (a group: a status of several), with the indexes it is in. */
async function seekAny(readers: IndexReader[], target: IndexPosition | undefined, strict: boolean): Promise<Entry | undefined> {
  const heads = await Promise.all(readers.map((r) => r.seek(target, strict)));
  let first: IndexPosition | undefined;
  for (const h of heads) if (h !== undefined && (first === undefined || isAfter(first, h))) first = h;
  if (first === undefined) return undefined;
  return { at: first.at, member: first.member, from: readers.filter((_, i) => heads[i] !== undefined && heads[i]!.at === first.at && heads[i]!.member === first.member).map((r) => r.index) };
}

type Entry = IndexPosition & { from: string[] };

/**
 * The entries in every group (one index of each), in order, after `start`: a leapfrog join —
 * each group skips ahead to the candidate the others agree on, so the rarest condition sets the
 * pace (a rare tool among a million completed tasks reads the rare tool's entries, and for each
 * one a page of the status index at its place).
 */
async function* joined(store: Store, groups: string[][], start: IndexPosition | undefined): AsyncGenerator<Entry> {
  const readers = groups.map((group) => group.map((index) => new IndexReader(store, index)));
  let target = start;
  let strict = start !== undefined;
  for (;;) {
    let candidate = await seekAny(readers[0]!, target, strict);
    if (candidate === undefined) return;
    let from = candidate.from;
    for (let agreed = 1, i = 1; agreed < readers.length; i++) {
      const found = await seekAny(readers[i % readers.length]!, candidate, false);
      if (found === undefined) return;
      if (found.at === candidate.at && found.member === candidate.member) {
        agreed++;
        from = [...from, ...found.from];
      } else {
        candidate = found;
        from = found.from;
        agreed = 1;
      }
    }
    yield { at: candidate.at, member: candidate.member, from };
    target = candidate;
    strict = true;
  }
}

/**
 * Records every group of indexes lists after `start` that pass `match`, in the indexes' order
 * (by creation), up to `limit`; with the position of the last one. Read `batch` at a time, in
 * parallel. An entry whose task is gone is dropped from its index on the way (gone is final).
 */
export async function readListed(
  store: Store,
  load: (id: string) => Promise<TaskRecord | undefined>,
  { groups, start, match, limit }: { groups: string[][]; start: IndexPosition | undefined; match: (r: TaskRecord) => boolean; limit: number },
): Promise<{ records: TaskRecord[]; last?: IndexPosition }> {
  const found: Array<{ record: TaskRecord; at: IndexPosition }> = [];
  const batchSize = Math.min(PAGE, Math.max(limit, 16));
  const entries = joined(store, groups, start);
  for (let exhausted = false; !exhausted && found.length < limit; ) {
    const batch: Entry[] = [];
    while (batch.length < batchSize) {
      const next = await entries.next();
      if (next.done) {
        exhausted = true;
        break;
      }
      batch.push(next.value);
    }
    const loaded = await Promise.all(batch.map((e) => load(e.member).catch(() => null)));
    for (let i = 0; i < batch.length && found.length < limit; i++) {
      const record = loaded[i];
      const entry = batch[i]!;
      if (record === undefined) for (const index of entry.from) void store.unschedule(index, entry.member).catch(() => {});
      if (record === undefined || record === null || !match(record)) continue; // gone, unreadable, or not selected
      found.push({ record, at: { at: entry.at, member: entry.member } });
    }
  }
  return { records: found.map((f) => f.record), ...(found.length > 0 ? { last: found.at(-1)!.at } : {}) };
}
