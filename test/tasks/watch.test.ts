import { describe, expect, it } from "vitest";
import { createMemoryStore, createRuntime, type FeedListener, type GetTaskResult, type Runtime, type Store } from "mcp-yield";
import { TASK_FEED } from "../../src/tasks/record/task-feed.js";
import { keyOf } from "../../src/tasks/record/record-store.js";
import { taskRecord, type TaskRecord } from "../../src/tasks/record/record.js";
import { createTaskWatches } from "../../src/tasks/watch.js";
import { closedAfterEach } from "../support/instances.js";
import { testKey } from "../support/keys.js";
import { TASKS, twoAsks } from "../support/listen.js";
import { instanceStores } from "../support/stores.js";

// Issue 58, point 3 below HTTP: a task's status reaches a watcher on another instance through the
// store's change feed — well before the watch's 5 s backstop re-read — and the frames are what
// tasks/get answers. Without a feed (a store that cannot listen) the watch re-reads the tasks at
// the poll interval instead: later, nothing lost.

const keys = [testKey("w", 58)];
const caps = { clientCapabilities: { extensions: { [TASKS]: {} }, elicitation: {} } };
const open = closedAfterEach("watch");
const kinds = instanceStores("watch", { cluster: true });

function instance(store: Store, pollIntervalMs = 500): Runtime {
  const runtime = createRuntime({ state: { keys }, store, tasks: { pollIntervalMs }, onError: () => {} });
  runtime.define([twoAsks]);
  open.push(runtime);
  return runtime;
}

/** Watch `taskId` on `runtime`: the frames as they come, with when each came. */
async function watch(runtime: Runtime, taskIds: string[]) {
  const frames: Array<{ task: GetTaskResult; at: number }> = [];
  let ended = false;
  const handle = await runtime.listenTasks({ notifications: { taskIds } }, caps, { frame: (task) => frames.push({ task, at: performance.now() }), ended: () => (ended = true) });
  open.push({ close: async () => handle.close() });
  handle.begin();
  return { handle, frames, ended: () => ended };
}

const start = async (runtime: Runtime) => {
  const created = (await runtime.callTool(twoAsks, { name: "two_asks", arguments: {} }, caps)) as { taskId: string };
  const taskId = created.taskId;
  await expect.poll(async () => (await runtime.getTask({ taskId }, caps)).status, { timeout: 10_000 }).toBe("input_required");
  return taskId;
};
const answer = (key: string) => ({ [key]: { action: "accept", content: { ok: true } } });

describe.each(kinds)("watching tasks on $name", ({ name, make }) => {
  /** Another instance's connection to the store (memory: the one shared object). */
  const connect = async () => {
    const store = await make();
    if (name !== "memory") open.push(store);
    return store;
  };

  it("hears another instance's changes through the feed, each frame what tasks/get answers", async () => {
    const [a, b] = [instance(await connect()), instance(await connect())];
    const taskId = await start(a);
    const watched = await watch(b, [taskId]);
    expect(watched.handle.taskIds).toEqual([taskId]);
    await expect.poll(() => watched.frames.length).toBe(1);
    const { resultType: _r, ...first } = watched.frames[0]!.task;
    expect(watched.frames[0]!.task).toEqual(await b.getTask({ taskId }, caps));
    expect(first.status).toBe("input_required");

    const sent = performance.now();
    await a.updateTask({ taskId, inputResponses: answer("a") }, caps);
    await expect.poll(() => watched.frames.length, { timeout: 3_000 }).toBe(2);
    // Through the feed: far sooner than the 5 s backstop.
    expect(watched.frames[1]!.at - sent).toBeLessThan(2_500);
    expect(Object.keys((watched.frames[1]!.task as { inputRequests: object }).inputRequests)).toEqual(["b"]);

    await a.updateTask({ taskId, inputResponses: answer("b") }, caps);
    await expect.poll(() => watched.ended(), { timeout: 5_000 }).toBe(true);
    const last = watched.frames.at(-1)!.task;
    expect(last.status).toBe("completed");
    expect(last).toEqual(await b.getTask({ taskId }, caps));
  });

  /** `store` with its reads of `taskId`'s record counted, and each answered through `hold` once armed. */
  const counted = (store: Store, taskId: () => string) => {
    const seen = { reads: 0, hold: undefined as undefined | ((value: string | undefined) => Promise<string | undefined>) };
    const proxy: Store = new Proxy(store, {
      get: (target, p) =>
        p === "get"
          ? async (key: string) => {
              const value = await target.get(key);
              if (!key.includes(taskId())) return value;
              seen.reads++;
              return seen.hold === undefined ? value : seen.hold(value);
            }
          : target[p as keyof Store],
    });
    return { proxy, seen };
  };
  /** Store reads of the task from a watch's start to its first frame. */
  const readsToFirstFrame = async (runtime: Runtime, taskId: string, seen: { reads: number }) => {
    const before = seen.reads;
    const watched = await watch(runtime, [taskId]);
    await expect.poll(() => watched.frames.length).toBe(1);
    watched.handle.close();
    return seen.reads - before;
  };

  /** A task started on instance A, watched on B whose store reads of it are counted, once B's feed is up. */
  const watchedWithFeedUp = async () => {
    const a = instance(await connect());
    let id = "";
    const { proxy, seen } = counted(await connect(), () => id);
    const b = instance(proxy);
    id = await start(a);
    // The first watch brings the feed up; from then on one read, not a second one at begin().
    await expect.poll(() => readsToFirstFrame(b, id, seen), { timeout: 5_000 }).toBe(1);
    return { a, b, id, proxy, seen };
  };

  it("with the feed up, a watch reads each task once: the acknowledging read is its first frame", async () => {
    const { seen } = await watchedWithFeedUp();
    expect(seen.reads).toBeLessThanOrEqual(4);
  });

  it("a change heard while the acknowledging read is under way is read again: the first frame is not stale", async () => {
    const { a, b, id, proxy, seen } = await watchedWithFeedUp();
    // B's acknowledging read returns the record from before A's change, and only once B has
    // heard of that change: it must read the task again rather than start from the stale read.
    let heard!: () => void;
    const notice = new Promise<void>((resolve) => (heard = resolve));
    const feed = await proxy.listen!(TASK_FEED, { message: (m) => m.includes(id) && heard(), reset: () => {} });
    expect(feed).toBeDefined();
    open.push(feed!);
    seen.hold = async (stale) => {
      seen.hold = undefined;
      await a.updateTask({ taskId: id, inputResponses: answer("a") }, caps);
      await notice;
      return stale;
    };
    const watched = await watch(b, [id]);
    await expect.poll(() => watched.frames.at(-1)?.task, { timeout: 3_000 }).toMatchObject({ inputRequests: { b: expect.anything() } });
    expect(watched.frames.map((f) => Object.keys((f.task as { inputRequests: object }).inputRequests))).not.toContainEqual(["a"]);
  });

  it("acknowledges only the principal's own tasks", async () => {
    const a = instance(await connect());
    const created = (await a.callTool(twoAsks, { name: "two_asks", arguments: {} }, { ...caps, principal: "alice" })) as { taskId: string };
    const handle = await a.listenTasks({ notifications: { taskIds: [created.taskId, "nope"] } }, { ...caps, principal: "bob" }, { frame: () => {}, ended: () => {} });
    expect(handle.taskIds).toEqual([]);
    handle.close();
  });
});

describe("watching tasks without a change feed", () => {
  it("re-reads the watched tasks at the poll interval: the frames still come", async () => {
    const shared = createMemoryStore();
    // The same store without `listen`: a pooler that cannot LISTEN, a store written before feeds.
    const deaf: Store = new Proxy(shared, { get: (target, p) => (p === "listen" ? undefined : target[p as keyof Store]) });
    const a = instance(shared);
    const b = instance(deaf, 100);
    const taskId = await start(a);
    const watched = await watch(b, [taskId]);
    await expect.poll(() => watched.frames.length).toBe(1);
    await a.updateTask({ taskId, inputResponses: { ...answer("a"), ...answer("b") } }, caps);
    await expect.poll(() => watched.ended(), { timeout: 5_000 }).toBe(true);
    expect(watched.frames.at(-1)!.task.status).toBe("completed");
  });
});

describe("watching tasks on the instance that changes them", () => {
  it("gets each change this instance writes at once, with no feed and a poll a minute away", async () => {
    // No change feed (a pooler that cannot LISTEN): without the writes handed over, the frames
    // would come with the re-read a minute later.
    const store: Store = new Proxy(createMemoryStore(), { get: (target, p) => (p === "listen" ? undefined : target[p as keyof Store]) });
    const a = instance(store, 60_000);
    const id = await start(a);
    const watched = await watch(a, [id]);
    await expect.poll(() => watched.frames.length).toBe(1);
    await a.updateTask({ taskId: id, inputResponses: answer("a") }, caps);
    const sent = performance.now();
    await a.updateTask({ taskId: id, inputResponses: answer("b") }, caps);
    await expect.poll(() => watched.ended(), { timeout: 5_000 }).toBe(true);
    expect(performance.now() - sent).toBeLessThan(5_000);
    const statuses = watched.frames.map((f) => f.task.status);
    expect(statuses.at(-1)).toBe("completed");
    expect(watched.frames.at(-1)!.task).toEqual(await a.getTask({ taskId: id }, caps));
  });

  it("never sends a record older than one it sent: a read begun before this instance's write comes back stale", async () => {
    // Three records of one task as the store held them, in order.
    const memory = createMemoryStore();
    const a = instance(memory);
    const taskId = await start(a);
    const stored = async () => taskRecord.parse(JSON.parse((await memory.get(keyOf(taskId)))!)) as TaskRecord;
    const askingBoth = await stored();
    await a.updateTask({ taskId, inputResponses: answer("a") }, caps);
    await expect.poll(async () => Object.keys(((await a.getTask({ taskId }, caps)) as { inputRequests?: object }).inputRequests ?? {})).toEqual(["b"]);
    const askingB = await stored();
    expect(askingB.rev).toBeGreaterThan(askingBoth.rev);

    // A watch whose backstop read is held until this instance has handed it the newer record.
    const loads: Array<(r: TaskRecord) => void> = [];
    // No feed: the backstop re-reads the task every 5 ms, each read answered by the test.
    const noFeed: Store = new Proxy(createMemoryStore(), { get: (target, p) => (p === "listen" ? undefined : target[p as keyof Store]) });
    const watches = createTaskWatches({ store: noFeed, load: () => new Promise((resolve) => loads.push(resolve)), backstopMs: 5, pollMs: 5 });
    open.push(watches);
    const frames: string[] = [];
    const handle = watches.watch([taskId], undefined, { frame: (t) => frames.push(Object.keys((t as { inputRequests?: object }).inputRequests ?? {}).join()), ended: () => {} });
    await expect.poll(() => loads.length).toBe(1);
    loads[0]!(askingBoth); // the acknowledging read
    (await handle).begin();
    await expect.poll(() => loads.length).toBe(2);
    loads[1]!(askingBoth);
    await expect.poll(() => frames).toEqual(["a,b"]);
    await expect.poll(() => loads.length).toBe(3);
    watches.wrote(askingB);
    expect(frames).toEqual(["a,b", "b"]);
    loads[2]!(askingBoth); // the read begun before the write
    await expect.poll(() => loads.length).toBe(4);
    expect(frames).toEqual(["a,b", "b"]);
  });
});

describe("watching tasks when the feed loses notices", () => {
  it("reads every watched task again when the listener says it reconnected (notices may have been missed)", async () => {
    const shared = createMemoryStore();
    // B hears the feed through a listener that drops notices until told, then reconnects.
    let dropping = false;
    const listeners: FeedListener[] = [];
    const lossy: Store = new Proxy(shared, {
      get: (target, p) =>
        p === "listen"
          ? (channel: string, listener: FeedListener) => {
              listeners.push(listener);
              return target.listen!(channel, { message: (m) => dropping || listener.message(m), reset: () => listener.reset() });
            }
          : target[p as keyof Store],
    });
    const a = instance(shared);
    const b = instance(lossy);
    const taskId = await start(a);
    const watched = await watch(b, [taskId]);
    await expect.poll(() => watched.frames.length).toBe(1);
    dropping = true;
    await a.updateTask({ taskId, inputResponses: answer("a") }, caps);
    // The notice was lost: nothing comes (the backstop is 5 s away).
    await new Promise((r) => setTimeout(r, 300));
    expect(watched.frames).toHaveLength(1);
    dropping = false;
    const reset = performance.now();
    for (const listener of listeners) listener.reset();
    await expect.poll(() => watched.frames.length, { timeout: 2_000 }).toBe(2);
    expect(watched.frames[1]!.at - reset).toBeLessThan(1_000);
    expect(Object.keys((watched.frames[1]!.task as { inputRequests: object }).inputRequests)).toEqual(["b"]);
  });
});
