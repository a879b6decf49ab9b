import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createSignalHandler, progress, type Runtime, step, tool, waitForSignal } from "mcp-yield";
import { closedAfterEach, until } from "../support/instances.js";
import { storesOf } from "../support/stores.js";
import { getTask, recordOf, refusalOf, SIGNAL_BASE, settledTask, signalPair, TASKS_INFO, waitingApproval } from "../support/signal-tasks.js";

// Signals you cannot lose (issue 57, points 1, 2 and 4): a value for a wait the task has not
// reached is kept in the task (202) and taken when it gets there, on whichever instance; one a
// schema refuses never uses its token up, and concurrent values for one wait end with exactly
// one taken; refused values cost nobody's share. On memory, Redis and PostgreSQL, delivered where
// the task parked (resumed) and on another instance (replayed from the journal).

const { stores } = storesOf("early-signals");
const open = closedAfterEach();

const Approval = z.object({ approved: z.boolean() });
/** Waits for `first`, then for `approval`: a value for `approval` sent while it waits for `first` is early. */
const twoWaits = tool({
  name: "two_waits",
  description: "",
  input: z.object({}),
  task: "required",
  async *run(_input, ctx) {
    yield* progress(`${ctx.signalToken("first")} ${ctx.signalToken("approval")}`);
    const first = yield* waitForSignal("first", z.string());
    const got = yield* waitForSignal("approval", Approval);
    const said = first.status === "received" ? first.value : "-";
    return got.status === "received" ? `${said} ${got.value.approved ? "approved" : "rejected"}` : `${said} timed out`;
  },
});

/** Start `two_waits` on `runtime`; once it waits for `first`, its two tokens. */
async function waitingFirst(runtime: Runtime, store: Parameters<typeof recordOf>[0]) {
  const { taskId } = (await runtime.callTool(twoWaits, { name: "two_waits", arguments: {} }, TASKS_INFO)) as { taskId: string };
  await until(async () => ((await recordOf(store, taskId)).awaits as { name?: string } | undefined)?.name === "first" || undefined);
  const [first, approval] = (await getTask(runtime, taskId)).statusMessage!.split(" ") as [string, string];
  return { taskId, first, approval };
}

const refusedBy = (p: Promise<unknown>) => p.then(() => "taken", refusalOf);

describe.each(stores)("early signals on %s", (name, make) => {
  it.each(["resumed", "replayed"] as const)("a value for a wait not reached yet is kept (202) and taken there; the token is then used up (%s)", async (how) => {
    const { store, a, via } = await signalPair(name, make, open, how, { tools: [twoWaits] });
    const { taskId, first, approval } = await waitingFirst(a.runtime, store);
    const handler = createSignalHandler(via.runtime);
    const early = await handler(new Request(SIGNAL_BASE + approval, { method: "POST", body: JSON.stringify({ approved: true }) }));
    expect(early.status).toBe(202);
    expect(await early.json()).toEqual({ status: "accepted" });
    expect((await recordOf(store, taskId)).early).toEqual([{ name: "approval", i: 0, value: { approved: true } }]);
    // Single use: another value for that wait is told it was used, and changes nothing.
    expect(await refusedBy(via.runtime.signal(approval, { approved: false }))).toBe("signal_used");
    expect(await via.runtime.signal(first, "go")).toEqual({ status: "delivered" });
    expect((await settledTask(via.runtime, taskId)).result!.content[0]!.text).toBe("go approved");
    expect(await refusedBy(via.runtime.signal(approval, { approved: true }))).toBe("signal_used");
    // A wait the task never reached: its token is refused as expired with the task.
    const second = await waitingFirst(a.runtime, store);
    await via.runtime.cancelTask({ taskId: second.taskId }, TASKS_INFO);
    expect(await refusedBy(via.runtime.signal(second.approval, { approved: true }))).toBe("signal_expired");
    expect(a.errors).toEqual([]);
  });

  it.each(["resumed", "replayed"] as const)("a kept value the wait's schema refuses is dropped with its reason; the token then opens the wait (%s)", async (how) => {
    const { store, a, via } = await signalPair(name, make, open, how, { tools: [twoWaits] });
    const { taskId, first, approval } = await waitingFirst(a.runtime, store);
    expect(await via.runtime.signal(approval, { approved: "yes" })).toEqual({ status: "accepted" });
    expect(await via.runtime.signal(first, "go")).toEqual({ status: "delivered" });
    const refused = await until(async () => {
      const r = await recordOf(store, taskId);
      return (r.awaits as { name?: string } | undefined)?.name === "approval" && r.refusedSignal !== undefined ? r : undefined;
    });
    expect(refused.refusedSignal).toMatchObject({ wait: "approval#0", reason: expect.stringContaining("approved") });
    expect(refused.early).toBeUndefined();
    expect((await getTask(via.runtime, taskId)).status).toBe("working");
    expect(await via.runtime.signal(approval, { approved: false })).toEqual({ status: "delivered" });
    expect((await settledTask(via.runtime, taskId)).result!.content[0]!.text).toBe("go rejected");
  });

  it("a value that comes while the run is on its way to the wait is taken at once when it gets there", async () => {
    const { store, a } = await signalPair(name, make, open, "resumed");
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const inStep = new Promise<void>((r) => (started = r));
    const gated = tool({
      name: "gated",
      description: "",
      input: z.object({}),
      task: "required",
      async *run(_input, ctx) {
        yield* progress(ctx.signalToken("go"));
        yield* step("slow", async () => {
          started();
          await gate;
          return 1;
        });
        const got = yield* waitForSignal("go", z.string());
        return got.status === "received" ? got.value : "timed out";
      },
    });
    a.runtime.define([gated]);
    const { taskId } = (await a.runtime.callTool(gated, { name: "gated", arguments: {} }, TASKS_INFO)) as { taskId: string };
    await inStep;
    const token = (await getTask(a.runtime, taskId)).statusMessage!;
    // The run holds the task (its lease) and has not reached the wait: the value is kept.
    expect(await a.runtime.signal(token, "hi")).toEqual({ status: "accepted" });
    release();
    expect((await settledTask(a.runtime, taskId)).result!.content[0]!.text).toBe("hi");
    expect((await recordOf(store, taskId)).early).toBeUndefined();
  });

  it.each(["resumed", "replayed"] as const)("values sent at once to one wait: exactly one is taken; a refused one never uses the token (%s)", async (how) => {
    const { store, a, b, via } = await signalPair(name, make, open, how);
    const { taskId, token } = await waitingApproval(a.runtime, store);
    const values = [{ approved: "no" }, { approved: true }, { approved: 0 }, { approved: false }, { approved: "x" }, { approved: true }];
    const outcomes = await Promise.all(values.map((v, i) => refusedBy((i % 2 === 0 ? via : b).runtime.signal(token, v))));
    const taken = outcomes.flatMap((o, i) => (o === "taken" ? [values[i]!] : []));
    expect(taken, outcomes.join(", ")).toHaveLength(1);
    // A good value not taken was told the token was used; a bad one was refused or told so.
    values.forEach((v, i) => {
      if (outcomes[i] === "taken") return;
      expect(typeof v.approved === "boolean" ? ["signal_used"] : ["signal_invalid_value", "signal_used"]).toContain(outcomes[i]);
    });
    const text = (await settledTask(via.runtime, taskId)).result!.content[0]!.text;
    expect(text).toBe(taken[0]!.approved ? "approved" : "rejected");
  });

  it.each(["resumed", "replayed"] as const)("refused values cost their task's owner nothing: 8 of 50 KB on a 200 KiB share (%s)", async (how) => {
    const { store, a, via } = await signalPair(name, make, open, how, { maxStoreBytesPerPrincipal: 200 * 1024 });
    const alice = { principal: "alice" };
    const { taskId, token } = await waitingApproval(a.runtime, store, {}, alice);
    for (let i = 0; i < 8; i++) {
      expect(await refusedBy(via.runtime.signal(token, { approved: "no", pad: "x".repeat(50_000) }))).toBe("signal_invalid_value");
    }
    // Alice can still start tasks, and the wait still takes a good value.
    await waitingApproval(a.runtime, store, {}, alice);
    expect(await via.runtime.signal(token, { approved: true })).toEqual({ status: "delivered" });
    expect((await settledTask(via.runtime, taskId, alice)).status).toBe("completed");
  });
});
