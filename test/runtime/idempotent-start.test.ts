import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createRuntime, elicit, type Runtime, step, tool } from "mcp-yield";
import { storesOf } from "../support/stores.js";
import { closedAfterEach } from "../support/instances.js";
import { testKey } from "../support/keys.js";
import { textOf } from "../support/results.js";

// Issue 54, point 1: a first request with an idempotency key is answered once — the same
// request again (a lost reply, a client's timeout, on any instance) gets the first one's
// response or task; the same key with other arguments is refused; no key, nothing changes.

const keys = [testKey("idem", 12)];
const info = { clientCapabilities: { elicitation: {} } };
const TASKS = { clientCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } };
const { stores } = storesOf("idempotent-start");
const cleanup = closedAfterEach();

/** A payment tool whose first round charges (slowly, counted) and then asks for a note. */
function charging(extra: { derive?: (args: { amount: number; order?: string | undefined }) => string | undefined; task?: "optional" } = {}) {
  const charges: string[] = [];
  const def = tool({
    name: "charge_once",
    description: "",
    input: z.object({ amount: z.number(), order: z.string().optional() }),
    ...(extra.task ? { task: extra.task } : {}),
    ...(extra.derive ? { idempotencyKey: extra.derive } : {}),
    async *run({ amount }) {
      const id = yield* step("charge", async () => {
        await new Promise((r) => setTimeout(r, 60));
        const id = `ch_${charges.length}_${Math.random().toString(36).slice(2, 8)}`;
        charges.push(id);
        return id;
      });
      if (extra.task) return `charged ${amount} as ${id}`;
      const note = yield* elicit("A note?", z.object({ note: z.string() }), { key: "note" });
      return `charged ${amount} as ${id} (${note.action === "accept" ? note.content.note : "-"})`;
    },
  });
  return { def, charges };
}

const params = (amount: number, key?: string, extra: Record<string, unknown> = {}) => ({
  name: "charge_once",
  arguments: { amount, ...extra },
  ...(key !== undefined ? { _meta: { idempotencyKey: key } } : {}),
});

describe.each(stores)("idempotent first requests on the %s store", (_name, makeStore) => {
  /** `n` instances sharing one store (each its own connection), keeping no generator: every one answers from the store alone. */
  async function instances(n: number): Promise<Runtime[]> {
    // The memory store is shared in this process; a real server gets a connection per instance.
    const memory = _name === "memory" ? await makeStore() : undefined;
    const runtimes: Runtime[] = [];
    for (let i = 0; i < n; i++) {
      const store = memory ?? (await makeStore());
      if (i === 0 || memory === undefined) cleanup.push(store);
      const runtime = createRuntime({ state: { keys }, store, liveCalls: 0, onError: () => {} });
      cleanup.push(runtime);
      runtimes.push(runtime);
    }
    return runtimes;
  }

  it("concurrent identical first requests with one key, on three instances: one charge, one response", async () => {
    const runtimes = await instances(3);
    const { def, charges } = charging();
    const replies = await Promise.all(Array.from({ length: 12 }, (_, i) => runtimes[i % 3]!.callTool(def, params(5, "order-1"), info)));
    expect(charges).toHaveLength(1);
    expect(new Set(replies.map((r) => JSON.stringify(r))).size).toBe(1);
    expect(replies[0]).toMatchObject({ resultType: "input_required" });
    // A later repeat (the reply was lost) gets the same state: the call goes on from it once.
    const later = await runtimes[1]!.callTool(def, params(5, "order-1"), info);
    expect(later).toEqual(replies[0]);
    const state = (later as { requestState: string }).requestState;
    const done = await runtimes[2]!.callTool(def, { ...params(5), requestState: state, inputResponses: { note: { action: "accept", content: { note: "n" } } } }, info);
    expect(textOf(done)).toBe(`charged 5 as ${charges[0]} (n)`);
    expect(charges).toHaveLength(1);
  });

  it("the same key with other arguments is refused with idempotency_conflict; another key charges anew; no key, a new call each time", async () => {
    const [runtime] = await instances(1);
    const { def, charges } = charging();
    await runtime!.callTool(def, params(5, "k-1"), info);
    await expect(runtime!.callTool(def, params(6, "k-1"), info)).rejects.toMatchObject({ code: -32602, data: { reason: "idempotency_conflict" } });
    expect(charges).toHaveLength(1);
    await runtime!.callTool(def, params(5, "k-2"), info);
    expect(charges).toHaveLength(2);
    await runtime!.callTool(def, params(5), info);
    await runtime!.callTool(def, params(5), info);
    expect(charges).toHaveLength(4);
  });

  it("a tool's own key serves clients that send none; a client's key wins over it", async () => {
    const [runtime] = await instances(1);
    const { def, charges } = charging({ derive: (args) => args.order });
    const a = await runtime!.callTool(def, params(5, undefined, { order: "o-9" }), info);
    const b = await runtime!.callTool(def, params(5, undefined, { order: "o-9" }), info);
    expect(b).toEqual(a);
    expect(charges).toHaveLength(1);
    await runtime!.callTool(def, params(5, "client-key", { order: "o-9" }), info);
    expect(charges).toHaveLength(2);
    // A tool that derives no key for these arguments: each first request is a new call.
    await runtime!.callTool(def, params(5), info);
    expect(charges).toHaveLength(3);
  });

  it("a task started with a key is one task: repeats answer with the same taskId, concurrent ones too", async () => {
    const runtimes = await instances(3);
    const { def, charges } = charging({ task: "optional" });
    for (const r of runtimes) r.define([def]);
    const created = await Promise.all(Array.from({ length: 6 }, (_, i) => runtimes[i % 3]!.callTool(def, params(7, "task-key"), TASKS)));
    const ids = new Set(created.map((c) => (c as { taskId?: string }).taskId));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toEqual(expect.any(String));
    await expect(runtimes[0]!.callTool(def, params(8, "task-key"), TASKS)).rejects.toMatchObject({ data: { reason: "idempotency_conflict" } });
    for (const r of runtimes) await r.idle();
    expect(charges).toHaveLength(1);
  });

  it("a malformed key is -32602 invalid_idempotency_key", async () => {
    const [runtime] = await instances(1);
    const { def, charges } = charging();
    for (const bad of ["", "x".repeat(256), 42, null, { k: 1 }]) {
      await expect(runtime!.callTool(def, { ...params(5), _meta: { idempotencyKey: bad } }, info)).rejects.toMatchObject({ code: -32602, data: { reason: "invalid_idempotency_key" } });
    }
    // The longest accepted key works.
    await runtime!.callTool(def, params(5, "x".repeat(255)), info);
    expect(charges).toHaveLength(1);
  });
});
