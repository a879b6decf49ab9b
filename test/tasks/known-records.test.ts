import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createMemoryStore, createRuntime, type Store, step, tool } from "mcp-yield";
import { createKnownRecords } from "../../src/tasks/record/known-records.js";
import type { TaskRecord } from "../../src/tasks/record/record.js";
import { testKey } from "../support/keys.js";

// A write of a task record first tries what this instance last read or wrote of it as the
// compare-and-swap's expected value: a run that writes its task several times in a row reads it
// once. What is kept is bounded, and a stale entry only costs a failed swap and a read.

const keys = [testKey("k", 14)];
const info = { clientCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } };
const running: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const r of running.splice(0)) await r.close();
});
const record = (id: string) => ({ id, lease: { owner: "me", until: 1 } }) as unknown as TaskRecord;

describe("known records", () => {
  it("keep the most recently used, at most 2,000 of them, and forget on request", () => {
    const known = createKnownRecords();
    for (let i = 0; i < 2_100; i++) known.remember(`t${i}`, { raw: "x", record: record(`t${i}`) });
    expect(known.recall("t99")).toBeUndefined();
    expect(known.recall("t100")?.raw).toBe("x");
    expect(known.recall("t2099")?.raw).toBe("x");
    known.forget("t2099");
    expect(known.recall("t2099")).toBeUndefined();
  });

  it("keep no task nobody holds: a sleeping or waiting task costs the instance nothing", () => {
    const known = createKnownRecords();
    known.remember("asleep", { raw: "x", record: { id: "asleep" } as unknown as TaskRecord });
    expect(known.recall("asleep")).toBeUndefined();
    known.remember("held", { raw: "x", record: record("held") });
    known.remember("held", { raw: "y", record: { id: "held" } as unknown as TaskRecord }); // parked since
    expect(known.recall("held")).toBeUndefined();
  });

  it("keep at most 8 MiB of records, and none larger than half a MiB", () => {
    const known = createKnownRecords();
    known.remember("big", { raw: "x".repeat(600 * 1024), record: record("big") });
    expect(known.recall("big")).toBeUndefined();
    for (let i = 0; i < 40; i++) known.remember(`t${i}`, { raw: "y".repeat(256 * 1024), record: record(`t${i}`) });
    expect(known.recall("t7")).toBeUndefined(); // 40 × 256 KiB = 10 MiB: the oldest went
    expect(known.recall("t8")?.raw.length).toBe(256 * 1024);
  });

  /** A memory store that counts reads per key. */
  function countingStore() {
    const store = createMemoryStore();
    const reads = new Map<string, number>();
    const counting = new Proxy(store, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (name !== "get" || typeof value !== "function") return typeof value === "function" ? value.bind(target) : value;
        return (key: string) => {
          reads.set(key, (reads.get(key) ?? 0) + 1);
          return (value as Store["get"]).call(target, key);
        };
      },
    });
    return { store, counting, reads };
  }

  /** A task whose third step waits for `release()`. */
  function gatedTask() {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const job = tool({
      name: "writes",
      description: "",
      input: z.object({}),
      task: "required",
      async *run() {
        const a = yield* step("a", () => 1);
        const b = yield* step("b", () => 2);
        yield* step("wait", () => gate.then(() => 3));
        const c = yield* step("c", () => 4);
        return `${a + b + c}`;
      },
    });
    return { job, release: () => release() };
  }

  /** The gated task started on an instance over `store`; closed after each test. */
  async function startGated(store: Store) {
    const { job, release } = gatedTask();
    const runtime = createRuntime({ state: { keys }, store, onError: () => {}, tasks: { leaseMs: 60_000, sweepMs: 60_000 } });
    running.push(runtime);
    runtime.define([job]);
    const { taskId } = (await runtime.callTool(job, { name: "writes", arguments: {} }, info)) as { taskId: string };
    return { runtime, taskId, release };
  }

  /** Polls `what` until it holds (every 5 ms, up to 5 s). */
  async function until(what: () => Promise<boolean>) {
    for (let i = 0; i < 1_000; i++) {
      if (await what()) return;
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error("not reached within 5 s");
  }

  it("a task's run does not read its record back before each write: it writes what it last wrote", async () => {
    const { counting, reads } = countingStore();
    const { runtime, taskId, release } = await startGated(counting);
    release();
    await runtime.idle();
    expect(reads.get(`task:${taskId}`) ?? 0).toBe(0); // started, steps a, b, wait, c recorded, completed: no read
    expect(((await runtime.getTask({ taskId }, info)) as unknown as { status: string }).status).toBe("completed");
  });

  it("a write by someone else in between is found: the run's next write fails its swap, reads, and keeps that write", async () => {
    const { store, counting } = countingStore();
    const { runtime, taskId, release } = await startGated(counting);
    const key = `task:${taskId}`;
    // Steps a and b recorded (the run waits in its third step): then another writer changes the record.
    await until(async () => (JSON.parse((await store.get(key))!) as { journal: unknown[] }).journal.length >= 2);
    const raw = (await store.get(key))!;
    const changed = { ...JSON.parse(raw), pollMs: 4321, rev: JSON.parse(raw).rev + 1 };
    expect(await store.swap(key, raw, JSON.stringify(changed), 60_000)).toBe(true);
    release();
    await runtime.idle();
    const final = JSON.parse((await store.get(key))!) as { status: string; pollMs: number };
    expect(final).toMatchObject({ status: "completed", pollMs: 4321 });
  });
});
