import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createMemoryStore, createRuntime, elicit, now, patched, type Runtime, type Store, step, tool, uuid } from "mcp-yield";
import { accept } from "mcp-yield/testing";
import { testKey } from "../support/keys.js";

// A task taken over after its instance died mid-step gets, on the new instance, exactly the
// values the first owner recorded — ids, times, capabilities, patch markers — and only the
// step that was in flight runs again, under the same key.

const keys = [testKey("t", 5)];
const info = { clientCapabilities: { elicitation: {}, sampling: {}, extensions: { "io.modelcontextprotocol/tasks": {} } } };
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

/** Two instances on one store; the first one's store stops answering once `kill()` is called (a dead process). */
function twoInstances() {
  const shared = createMemoryStore();
  let dead = false;
  const dying = new Proxy(shared, {
    get: (t, p) => {
      const v = t[p as keyof Store];
      return typeof v === "function" ? (...args: unknown[]) => (dead ? new Promise(() => {}) : (v as (...a: unknown[]) => unknown).apply(t, args)) : v;
    },
  }) as Store;
  const make = (store: Store): Runtime => {
    const r = createRuntime({ state: { keys }, store, onError: () => {}, tasks: { leaseMs: 300, sweepMs: 50 } });
    open.push(r);
    return r;
  };
  return { a: make(dying), b: make(shared), kill: () => (dead = true) };
}

async function until<T>(what: () => Promise<T | undefined> | T | undefined): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const got = await what();
    if (got !== undefined) return got;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("timed out waiting");
}

const statusOf = async (r: Runtime, taskId: string) =>
  (await r.getTask({ taskId }, info)) as unknown as { status: string; result?: { content: Array<{ text: string }> }; inputRequests?: Record<string, unknown> };

describe("takeover is exact", () => {
  it("uuid(), now() and ctx.can made after the last step are the first owner's; the step in flight runs again under the same key", async () => {
    const { a, b, kill } = twoInstances();
    const seen: Array<{ id: string; at: number; can: boolean; key: string }> = [];
    let hang = true;
    const job = tool({
      name: "job",
      description: "",
      input: z.object({}),
      task: "required",
      async *run(_i, ctx) {
        yield* step("first", () => 1);
        const id = yield* uuid();
        const at = yield* now();
        const can = ctx.can("sampling");
        return yield* step("pay", async () => {
          seen.push({ id, at, can, key: ctx.idempotencyKey(`pay-${id}`) });
          if (hang) await new Promise(() => {}); // the instance dies in here
          return `paid ${id.slice(0, 8)}`;
        });
      },
    });
    b.define([job]);
    const { taskId } = (await a.callTool(job, { name: "job", arguments: {} }, info)) as { taskId: string };
    await until(() => (seen.length > 0 ? true : undefined));
    hang = false;
    kill();
    const done = await until(async () => ((await statusOf(b, taskId)).status === "completed" ? statusOf(b, taskId) : undefined));
    expect(seen).toHaveLength(2);
    expect(seen[1]).toEqual(seen[0]);
    expect(done.result!.content[0]!.text).toBe(`paid ${seen[0]!.id.slice(0, 8)}`);
  });

  it("patched() after a step in a task answered once keeps its branch after a takeover: one branch runs, never both", async () => {
    const { a, b, kill } = twoInstances();
    const ran: string[] = [];
    let hang = true;
    const job = tool({
      name: "patchy",
      description: "",
      input: z.object({}),
      task: "required",
      async *run() {
        yield* elicit("Go?", z.object({ ok: z.boolean() }), { key: "go" });
        yield* step("prepare", () => ran.push("prepare"));
        const v2 = yield* patched("v2");
        const branch = v2 ? "new" : "old";
        return yield* step(branch, async () => {
          ran.push(branch);
          if (hang) await new Promise(() => {});
          return branch;
        });
      },
    });
    b.define([job]);
    const { taskId } = (await a.callTool(job, { name: "patchy", arguments: {} }, info)) as { taskId: string };
    const parked = await until(async () => {
      const t = await statusOf(a, taskId);
      return t.status === "input_required" ? t : undefined;
    });
    await a.updateTask({ taskId, inputResponses: { [Object.keys(parked.inputRequests!)[0]!]: accept({ ok: true }) } }, info);
    await until(() => (ran.includes("new") || ran.includes("old") ? true : undefined));
    hang = false;
    kill();
    const done = await until(async () => ((await statusOf(b, taskId)).status === "completed" ? statusOf(b, taskId) : undefined));
    expect(ran).toEqual(["prepare", "new", "new"]);
    expect(done.result!.content[0]!.text).toBe("new");
  });

  it("asks under default keys with messages built each time replay on the new owner with the first owner's answers", async () => {
    // The new owner replays them through the process-wide fingerprint cache (found by ordinal),
    // which the first owner filled: each answer must reach the ask it was given for.
    const { a, b, kill } = twoInstances();
    const summed: number[] = [];
    let hang = true;
    const job = tool({
      name: "adder",
      description: "",
      input: z.object({ n: z.number().int() }),
      task: "required",
      async *run({ n }) {
        const got: number[] = [];
        for (let i = 0; i < n; i++) {
          const r = yield* elicit(`Number ${i + 1} of ${n}?`, z.object({ v: z.number().int() }));
          got.push(r.action === "accept" ? r.content.v : 0);
        }
        return yield* step("sum", async () => {
          summed.push(got.reduce((x, y) => x + y, 0));
          if (hang) await new Promise(() => {});
          return `${got.join("+")}=${summed.at(-1)}`;
        });
      },
    });
    b.define([job]);
    const { taskId } = (await a.callTool(job, { name: "adder", arguments: { n: 3 } }, info)) as { taskId: string };
    for (let i = 0; i < 3; i++) {
      const parked = await until(async () => {
        const t = await statusOf(a, taskId);
        return t.status === "input_required" && t.inputRequests![`elicit-${i}`] !== undefined ? t : undefined;
      });
      expect((parked.inputRequests![`elicit-${i}`] as { params: { message: string } }).params.message).toBe(`Number ${i + 1} of 3?`);
      await a.updateTask({ taskId, inputResponses: { [`elicit-${i}`]: accept({ v: (i + 1) * 10 }) } }, info);
    }
    await until(() => (summed.length > 0 ? true : undefined));
    hang = false;
    kill();
    const done = await until(async () => ((await statusOf(b, taskId)).status === "completed" ? statusOf(b, taskId) : undefined));
    expect(summed).toEqual([60, 60]);
    expect(done.result!.content[0]!.text).toBe("10+20+30=60");
  });
});
