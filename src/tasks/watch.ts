import type { Listening, Store } from "../store/index.js";
import type { GetTaskResult } from "../wire/index.js";
import { detailedTaskOf, isTerminal, type TaskRecord } from "./record/record.js";
import { readTaskNotice, TASK_FEED } from "./record/task-feed.js";

// tasks/watch.ts owns following tasks for their callers (`notifications/tasks` on a
// `subscriptions/listen` stream): whichever instance changes a task, the store's change feed tells
// this one, which reads the record again (a change this instance wrote: the record as written)
// and hands each watcher the task as `tasks/get` would answer it now. One feed listener per engine, shared with the sweeper (Store.listen shares a
// channel's subscription); nothing is kept past a watch, so a reconnecting client listens again.
//
// Invariants:
// 1. A watcher first gets the task as it is, then every change it has not seen: a notice lost
//    (the feed reconnected, a pooler that cannot LISTEN) costs latency — the feed's reset and a
//    slower re-read of every watched task catch up — never a missed status.
// 2. Frames of one task reach a watcher in the order the task changed: one read of a task at a
//    time, a notice heard meanwhile reads it once more after, and a record older (by `rev`)
//    than one a watcher was sent is not sent to it — a change this instance writes is handed to
//    its watchers here as written (`wrote`: no read back), so a read begun before it can come
//    back older.
// 3. A task is watched until its terminal frame is sent, or it is gone (expired); the watch
//    then tells its owner it has nothing more to send.

/** Who gets a watch's frames. */
export interface TaskWatchSink {
  /** The task as `tasks/get` answers it now: on the watch's start, then on every change. */
  frame(task: GetTaskResult): void;
  /** Every watched task has ended (its terminal frame sent) or is gone: nothing more will come. */
  ended(): void;
}

/** One watch: the ids it acknowledged (those the principal owns), and how to start and stop it. */
export interface TaskWatchHandle {
  taskIds: string[];
  /**
   * Send each acknowledged task's first frame — once the caller has told its client what was
   * acknowledged. The record is read again then: a change since the acknowledgement is in it.
   */
  begin(): void;
  close(): void;
}

/** What the watches need of the engine. */
export interface TaskWatchParts {
  store: Store;
  /** The task's record, `undefined` when there is no such task any more. */
  load: (id: string) => Promise<TaskRecord | undefined>;
  /** Every watched task is read again this often while the feed is up, and at `pollMs` while it is not. */
  backstopMs: number;
  pollMs: number;
}

interface Watcher {
  principal: string | undefined;
  sink: TaskWatchSink;
  /** Per task still followed: what its last frame said (`lastUpdatedAt` aside), and the record's `rev` it came from (-1: none yet). */
  seen: Map<string, { content: string; rev: number }>;
}

/** A frame's content without the time of the write, which changes on writes a caller cannot see (a lease renewed). */
const contentOf = (task: GetTaskResult): string => JSON.stringify({ ...task, lastUpdatedAt: undefined });

/** The watches of one engine. */
export function createTaskWatches({ store, load, backstopMs, pollMs }: TaskWatchParts) {
  const watched = new Map<string, Set<Watcher>>();
  // One read of a task at a time; a notice heard meanwhile asks for one more after it.
  const reading = new Map<string, Promise<void>>();
  const again = new Set<string>();
  let listening: Promise<Listening | undefined> | undefined;
  let feedUp = false;
  // While a watch reads the tasks it acknowledges, the feed's notices of those tasks are noted
  // (a watcher is registered only once the read is back): a task no notice named since the read
  // began, the feed up all along, gets its first frame from that read, not from a second one.
  let heardSeq = 0;
  let resetSeq = 0;
  const acking = new Map<string, number>();
  const noticed = new Map<string, number>();
  let timer: ReturnType<typeof setInterval> | undefined;
  let closed = false;

  function send(watcher: Watcher, id: string, record: TaskRecord | undefined): void {
    const last = watcher.seen.get(id);
    if (last === undefined) return;
    if (record !== undefined) {
      // A read begun before a write this instance handed over comes back older: not sent.
      if (record.rev < last.rev) return;
      const task = detailedTaskOf(record);
      const content = contentOf(task);
      if (last.content !== content) watcher.sink.frame(task);
      watcher.seen.set(id, { content, rev: record.rev });
      if (!isTerminal(record.status)) return;
    }
    unwatch(watcher, id);
    if (watcher.seen.size === 0) watcher.sink.ended();
  }

  function unwatch(watcher: Watcher, id: string): void {
    watcher.seen.delete(id);
    const set = watched.get(id);
    set?.delete(watcher);
    if (set?.size === 0) watched.delete(id);
  }

  /** Read the task again and tell its watchers what changed. */
  function refresh(id: string): void {
    if (!watched.has(id) || closed) return;
    if (reading.has(id)) {
      again.add(id);
      return;
    }
    const read = load(id)
      .then(
        (record) => {
          for (const watcher of [...(watched.get(id) ?? [])]) send(watcher, id, record?.principal === watcher.principal ? record : undefined);
        },
        // The store is out: the backstop reads it again.
        () => {},
      )
      .finally(() => {
        reading.delete(id);
        if (again.delete(id)) refresh(id);
      });
    reading.set(id, read);
  }

  function refreshAll(): void {
    for (const id of watched.keys()) refresh(id);
  }

  /** The feed's listener and the backstop's timer, from the first watch on. */
  function start(): void {
    if (listening !== undefined) return;
    listening = (
      store.listen?.(TASK_FEED, {
        message: (message) => {
          const notice = readTaskNotice(message);
          if (notice === undefined) return;
          heardSeq++;
          if (acking.has(notice.t)) noticed.set(notice.t, heardSeq);
          refresh(notice.t);
        },
        reset: () => {
          resetSeq = ++heardSeq;
          refreshAll();
        },
      }) ?? Promise.resolve(undefined)
    ).catch(() => undefined);
    void listening.then((opened) => {
      if (closed) return void opened?.close().catch(() => {});
      feedUp = opened !== undefined;
      arm();
    });
    arm();
  }

  function arm(): void {
    if (timer !== undefined) clearInterval(timer);
    timer = setInterval(refreshAll, feedUp ? backstopMs : pollMs);
    timer.unref?.();
  }

  function drop(watcher: Watcher): void {
    for (const id of [...watcher.seen.keys()]) unwatch(watcher, id);
  }

  return {
    /**
     * Watch `ids` for `principal`: those it owns are acknowledged, each gets a first frame (the
     * task as it is now), then one per change. Throws what the store throws while reading them.
     */
    async watch(ids: readonly string[], principal: string | undefined, sink: TaskWatchSink): Promise<TaskWatchHandle> {
      if (closed) throw new Error("mcp-yield: the runtime is closed");
      start();
      const unique = [...new Set(ids)];
      const from = heardSeq;
      const fed = feedUp;
      for (const id of unique) acking.set(id, (acking.get(id) ?? 0) + 1);
      let records: Array<TaskRecord | undefined>;
      let unchanged: (id: string) => boolean;
      try {
        records = await Promise.all(unique.map((id) => load(id)));
      } finally {
        const quiet = new Set(unique.filter((id) => fed && feedUp && resetSeq <= from && (noticed.get(id) ?? from) <= from));
        unchanged = (id) => quiet.has(id);
        for (const id of unique) {
          const left = acking.get(id)! - 1;
          if (left > 0) acking.set(id, left);
          else acking.delete(id), noticed.delete(id);
        }
      }
      const owned = records.filter((r): r is TaskRecord => r !== undefined && r.principal === principal);
      const watcher: Watcher = { principal, sink, seen: new Map(owned.map((r) => [r.id, { content: "", rev: -1 }])) };
      for (const r of owned) {
        let set = watched.get(r.id);
        if (set === undefined) watched.set(r.id, (set = new Set()));
        set.add(watcher);
      }
      const taskIds = owned.map((r) => r.id);
      return {
        taskIds,
        begin: () => {
          for (const r of owned) {
            // The acknowledging read is the task as it is unless a notice (or a reconnect) came
            // since it began, a frame went out already, or a read of it is under way.
            if (unchanged(r.id) && watcher.seen.get(r.id)?.rev === -1 && !reading.has(r.id)) send(watcher, r.id, r);
            else refresh(r.id);
          }
        },
        close: () => drop(watcher),
      };
    },
    /**
     * This instance just wrote `record`: its watchers here get it without reading it back (the
     * feed's notice of it then finds a task that ended unwatched, or reads what is no newer).
     */
    wrote(record: TaskRecord): void {
      for (const watcher of [...(watched.get(record.id) ?? [])]) {
        if (watcher.principal !== record.principal) continue;
        // The writer is a transition under way: a sink that throws must not fail it.
        try {
          send(watcher, record.id, record);
        } catch {}
      }
    },
    /** Stop every watch and the feed's listener. */
    async close(): Promise<void> {
      closed = true;
      if (timer !== undefined) clearInterval(timer);
      watched.clear();
      const open = await listening;
      await open?.close().catch(() => {});
    },
  };
}
