import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createMemoryStore, createRuntime, createTaskAdmin, type Runtime, type Store, step, type TaskFilter, tool, type ToolDefinition } from "mcp-yield";
import { LIST_ALL, LIST_HELD, listByStatus, listIndexesOf, moveInList } from "../../src/tasks/record/list-index.js";
import type { TaskRecord } from "../../src/tasks/record/record.js";
import { closedAfterEach, until } from "../support/instances.js";
import { testKey } from "../support/keys.js";
import { taskRecord } from "../support/task-record.js";

// Issue 56, point 2: `tasks list` with filters answers a page without reading every task —
// through indexes by creation time per tool, principal, status and held tasks, paged by a
// cursor — and the indexes stay exact while tasks change, end and expire.

const keys = [testKey("l", 31)];
const open = closedAfterEach("task-list");
const asTask = (principal?: string) => ({ clientCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } }, ...(principal !== undefined ? { principal } : {}) });

/** A store that counts the task records read (`get` of `task:…`) and the index pages read. */
function counted(store: Store) {
  const counts = { records: 0, pages: 0 };
  const view: Store = new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (name === "get") return (key: string) => (key.startsWith("task:") && counts.records++, target.get(key));
      if (name === "members") return (...args: Parameters<Store["members"]>) => (counts.pages++, target.members(...args));
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { view, counts, reset: () => Object.assign(counts, { records: 0, pages: 0 }) };
}

const quick = tool({
  name: "quick",
  description: "",
  input: z.object({ n: z.number() }),
  task: "required",
  async *run({ n }) {
    return `done ${n}`;
  },
});
const rare = tool({
  name: "rare",
  description: "",
  input: z.object({ n: z.number() }),
  task: "required",
  async *run({ n }) {
    return `rare ${n}`;
  },
});
const broken = tool({
  name: "broken",
  description: "",
  input: z.object({}),
  task: "required",
  async *run() {
    return yield* step(
      "call",
      () => {
        throw new Error("service down");
      },
      { retry: { attempts: 2, initialMs: 1 } },
    );
  },
});

function instance(store: Store, defs: ToolDefinition[]): Runtime {
  const runtime = createRuntime({ state: { keys }, store, onError: () => {}, tasks: { sweepMs: 20, maxPerPrincipal: 100_000 } });
  runtime.define(defs);
  open.push(runtime);
  return runtime;
}

const start = async (r: Runtime, def: ToolDefinition, args: Record<string, unknown>, principal?: string) =>
  ((await r.callTool(def, { name: def.name, arguments: args }, asTask(principal) as never)) as { taskId: string }).taskId;

describe("a filtered task list reads the index its filter names", () => {
  it("over 3,000 tasks: a rare tool, held tasks, one principal, a status and a recent time each read about as many records as they list", async () => {
    const store = createMemoryStore();
    const { view, counts, reset } = counted(store);
    const runtime = instance(store, [quick, rare, broken]);
    const admin = createTaskAdmin({ store: view });
    for (let i = 0; i < 3000; i += 100) await Promise.all(Array.from({ length: 100 }, (_, j) => start(runtime, quick, { n: i + j }, `user-${(i + j) % 50}`)));
    const rares = await Promise.all(Array.from({ length: 6 }, (_, n) => start(runtime, rare, { n }, "alice")));
    const held = await Promise.all(Array.from({ length: 4 }, () => start(runtime, broken, {}, "bob")));
    await until(async () => ((await admin.list({ needsAttention: true })).length === 4 ? true : undefined));
    await until(async () => ((await admin.list({ status: "working", limit: 1000 })).length === 4 ? true : undefined));

    const cases: Array<[string, Parameters<typeof admin.list>[0], string[]]> = [
      ["--tool rare", { tool: "rare" }, rares],
      ["--needs-attention", { needsAttention: true }, held],
      ["--principal alice", { principal: "alice" }, rares],
      ["--status working", { status: "working" }, held],
      ["--status working,input_required --tool broken", { status: ["working", "input_required"], tool: "broken" }, held],
      // Two conditions, one rare: the rare one sets the pace (a join, not a scan of the common one).
      ["--tool rare --status completed", { tool: "rare", status: "completed" }, rares],
      ["--tool quick --status failed", { tool: "quick", status: "failed" }, []],
      ["--tool quick --principal alice", { tool: "quick", principal: "alice" }, []],
      ["--principal bob --needs-attention", { principal: "bob", needsAttention: true }, held],
    ];
    for (const [name, filter, expected] of cases) {
      reset();
      const listed = await admin.list(filter);
      expect(new Set(listed.map((t) => t.taskId)), name).toEqual(new Set(expected));
      // Each listed task read once (a completed quick task may still sit in a status index it left: a race's leftover costs a look).
      expect(counts.records, name).toBeLessThanOrEqual(expected.length + 2);
      expect(counts.pages, name).toBeLessThanOrEqual(3 + 2 * expected.length);
    }
    // A recent time starts the read there: the 3,000 older tasks are not read.
    const recent = (await admin.show(rares[0]!))!.createdAt;
    reset();
    const since = await admin.list({ since: new Date(recent), limit: 1000 });
    expect(since.map((t) => t.taskId).sort()).toEqual([...rares, ...held].sort());
    expect(counts.records).toBeLessThanOrEqual(10 + 100); // the tasks created in the same millisecond as the first rare one at most

    // Unfiltered, a page reads a page's records, not the store.
    reset();
    expect(await admin.list({ limit: 10 })).toHaveLength(10);
    expect(counts.records).toBeLessThanOrEqual(16);
  }, 60_000);

  it("pages by cursor: every task once, in creation order, while tasks are added and removed between pages", async () => {
    const store = createMemoryStore();
    const runtime = instance(store, [quick]);
    const admin = createTaskAdmin({ store });
    const first = await Promise.all(Array.from({ length: 40 }, (_, n) => start(runtime, quick, { n })));
    const all = (await admin.list({ limit: 1000 })).map((t) => t.taskId);
    expect(new Set(all)).toEqual(new Set(first));
    const created = (await admin.list({ limit: 1000 })).map((t) => t.createdAt);
    expect([...created].sort()).toEqual(created);

    const seen: string[] = [];
    let page = await admin.listPage({ limit: 7 });
    const added: string[] = [];
    while (true) {
      seen.push(...page.tasks.map((t) => t.taskId));
      if (page.next === undefined) break;
      await new Promise((r) => setTimeout(r, 2)); // a later millisecond than the page's last task
      added.push(await start(runtime, quick, { n: 100 + added.length })); // newer than any: listed on a later page
      page = await admin.listPage({ limit: 7, after: page.next });
    }
    expect(seen.slice(0, all.length)).toEqual(all);
    expect(new Set(seen)).toEqual(new Set([...all, ...added]));
    expect(seen).toHaveLength(all.length + added.length);
  }, 30_000);

  it("refuses a cursor it did not give, and a bad limit, with an error naming them", async () => {
    const admin = createTaskAdmin({ store: createMemoryStore() });
    for (const after of ["", "not a cursor", "WzEsMl0", Buffer.from('["x","y"]').toString("base64url"), Buffer.from("[1]").toString("base64url")])
      await expect(admin.listPage({ after })).rejects.toThrow(/not a cursor a task list gave/);
    await expect(admin.listPage({ limit: 0 })).rejects.toThrow(/limit must be a positive integer/);
    const cursor = Buffer.from(JSON.stringify([Date.now(), "zzz"])).toString("base64url");
    expect(await admin.listPage({ after: cursor })).toEqual({ tasks: [] });
  });

  it("a task that expires leaves every list index, and its record is deleted by the sweeper", async () => {
    const store = createMemoryStore();
    const runtime = createRuntime({ state: { keys }, store, onError: () => {}, tasks: { sweepMs: 20, ttlMs: 300 } });
    runtime.define([quick]);
    open.push(runtime);
    const id = await start(runtime, quick, { n: 1 }, "carol");
    const admin = createTaskAdmin({ store });
    await until(async () => ((await admin.show(id))?.status === "completed" ? true : undefined));
    const indexes = [LIST_ALL, "task-list:tool:quick", listByStatus("completed")];
    for (const index of indexes) expect((await store.members(index, 10)).map((m) => m.member)).toContain(id);
    await until(async () => ((await store.get(`task:${id}`)) === undefined ? true : undefined), 10_000);
    for (const index of [...indexes, listByStatus("working")]) expect((await store.members(index, 10)).map((m) => m.member)).not.toContain(id);
    expect((await store.members("tasks", 10)).map((m) => m.member)).not.toContain(id);
  }, 20_000);

  it("an entry whose task is gone is dropped when a list reads it; reindex puts back tasks an older version never indexed", async () => {
    const store = createMemoryStore();
    const runtime = instance(store, [quick, rare]);
    const admin = createTaskAdmin({ store });
    const ids = await Promise.all([start(runtime, quick, { n: 1 }), start(runtime, rare, { n: 2 }, "dave")]);
    await until(async () => ((await admin.list({ status: "completed" })).length === 2 ? true : undefined));
    await store.schedule("task-list:tool:rare", "gone-task", 1);
    expect((await admin.list({ tool: "rare" })).map((t) => t.taskId)).toEqual([ids[1]]);
    await until(async () => ((await store.members("task-list:tool:rare", 10)).some((m) => m.member === "gone-task") ? undefined : true));

    // As a version without list indexes left them: the tasks are listed unfiltered only, until reindex.
    const record = JSON.parse((await store.get(`task:${ids[1]}`))!) as TaskRecord;
    for (const index of listIndexesOf(record)) await store.unschedule(index, ids[1]!);
    expect(await admin.list({ tool: "rare" })).toEqual([]);
    expect(await admin.reindex()).toBe(2);
    expect((await admin.list({ tool: "rare" })).map((t) => t.taskId)).toEqual([ids[1]]);
    expect((await admin.list({ principal: "dave" })).map((t) => t.taskId)).toEqual([ids[1]]);
  });
});

describe("moving a task between status indexes", () => {
  const base = taskRecord({ id: "t1", created: 1000, updated: 1000, pollMs: 100 });
  const states: Array<Pick<TaskRecord, "status" | "held">> = [
    { status: "working" },
    { status: "input_required" },
    { status: "working", held: { reason: "r", at: 1 } } as Pick<TaskRecord, "status" | "held">,
  ];

  it("concurrent writers, their index writes interleaved at random: the task is always in the index of the status it ends in", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 2, maxLength: 6 }), fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 40, maxLength: 40 }), async (moves, delays) => {
        const inner = createMemoryStore();
        let d = 0;
        const pause = () => new Promise((r) => setTimeout(r, delays[d++ % delays.length]!));
        // Every index write and record read takes its own random time: writers' steps interleave.
        const store: Store = new Proxy(inner, {
          get(target, name, receiver) {
            const value = Reflect.get(target, name, receiver);
            // A batch of index changes lands one change at a time, each after its own pause.
            if (name === "index")
              return async (changes: Parameters<Store["index"]>[0]) => {
                await Promise.all(
                  changes.map(async (c) => {
                    await pause();
                    await target.index([c]);
                  }),
                );
              };
            return typeof value === "function" ? value.bind(target) : value;
          },
        });
        let current: TaskRecord = { ...base, status: "working" };
        await store.schedule(listByStatus("working"), base.id, base.created);
        // Each writer swaps the record at once (as the compare-and-swap orders them), then moves the indexes.
        await Promise.all(
          moves.map(async (m, i) => {
            await new Promise((r) => setTimeout(r, i));
            const before = current;
            const after: TaskRecord = { ...base, ...states[m]!, rev: before.rev + 1 };
            if (states[m]!.held === undefined) delete (after as { held?: unknown }).held;
            current = after;
            await moveInList(store, before, after, async () => (await pause(), current));
          }),
        );
        for (const s of ["working", "input_required"] as const) {
          const listed = (await inner.members(listByStatus(s), 10)).some((e) => e.member === base.id);
          if (current.status === s) expect(listed).toBe(true);
        }
        const heldListed = (await inner.members(LIST_HELD, 10)).some((e) => e.member === base.id);
        if (current.held !== undefined) expect(heldListed).toBe(true);
      }),
      { numRuns: 60 },
    );
  }, 60_000);
});

describe("the list's join of indexes", () => {
  const statuses = ["working", "input_required", "completed", "failed", "cancelled"] as const;
  const task = fc.record({
    tool: fc.constantFrom("a", "b", "c"),
    status: fc.constantFrom(...statuses),
    principal: fc.option(fc.constantFrom("p1", "p2"), { nil: undefined }),
    held: fc.boolean(),
    created: fc.integer({ min: 0, max: 40 }), // few distinct times: many ties
  });
  const filter = fc.record(
    {
      tool: fc.constantFrom("a", "b", "c", "z"),
      status: fc.oneof(fc.constantFrom(...statuses), fc.subarray([...statuses], { minLength: 1 })),
      principal: fc.constantFrom("p1", "p2"),
      needsAttention: fc.constant(true),
      since: fc.integer({ min: 0, max: 45 }),
    },
    { requiredKeys: [] },
  );

  it("pages through exactly the tasks a filter selects, in (creation, id) order, whatever the page size", async () => {
    const { readListed, indexesFor } = await import("../../src/tasks/admin/list.js");
    const { taskMatcher } = await import("../../src/tasks/admin/filter.js");
    await fc.assert(
      fc.asyncProperty(fc.array(task, { minLength: 0, maxLength: 700, size: "max" }), filter, fc.integer({ min: 1, max: 250 }), async (tasks, f, limit) => {
        const store = createMemoryStore();
        const records = new Map<string, TaskRecord>();
        tasks.forEach((t, i) => {
          const r = {
            v: 1,
            id: `t${String(i).padStart(4, "0")}`,
            tool: t.tool,
            status: t.status,
            created: 1_800_000_000_000 + t.created,
            ...(t.principal ? { principal: t.principal } : {}),
            ...(t.held && t.status === "working" ? { held: { reason: "x", at: 0 } } : {}),
          } as TaskRecord;
          records.set(r.id, r);
        });
        await Promise.all([...records.values()].flatMap((r) => listIndexesOf(r).map((index) => store.schedule(index, r.id, r.created))));
        const { since: sinceAt, ...rest } = f;
        const taskFilter: TaskFilter = { ...rest, ...(sinceAt !== undefined ? { since: new Date(1_800_000_000_000 + sinceAt) } : {}) };
        const match = taskMatcher(taskFilter);
        const expected = [...records.values()]
          .filter(match)
          .sort((x, y) => x.created - y.created || (x.id < y.id ? -1 : 1))
          .map((r) => r.id);
        const seen: string[] = [];
        let start = taskFilter.since === undefined ? undefined : { at: taskFilter.since.getTime(), member: "" };
        for (let pages = 0; pages < 1000; pages++) {
          const page = await readListed(store, async (id) => records.get(id), { groups: indexesFor(taskFilter), start, match, limit });
          seen.push(...page.records.map((r) => r.id));
          if (page.records.length < limit) break;
          start = page.last;
        }
        expect(seen).toEqual(expected);
      }),
      { numRuns: 40 },
    );
  }, 120_000);
});
