import { describe, expect, it } from "vitest";
import { z } from "zod";
import { all, createTaskAdmin, elicit, progress, race, type Runtime, sleep, step, type Store, tool, waitForSignal } from "mcp-yield";
import { accept } from "mcp-yield/testing";
import { closedAfterEach, killable, until } from "../support/instances.js";
import { storesOf } from "../support/stores.js";
import { getTask, recordOf, refusalOf, settledTask, signalInstance, signalPair } from "../support/signal-tasks.js";

// Whichever comes first (issue 57, point 8), in tasks on memory, Redis and PostgreSQL: a race's
// winner is recorded and replayed, its losers cancelled — a losing wait's token is refused, a
// losing ask is no longer asked, a losing step is aborted and never runs again. Each decided
// where the task parked (resumed) and on another instance (replayed from the journal).

const { stores } = storesOf("race");
const open = closedAfterEach();

const Approval = z.object({ approved: z.boolean() });
const Confirm = z.object({ ok: z.boolean() });
const INFO = { clientCapabilities: { elicitation: {}, extensions: { "io.modelcontextprotocol/tasks": {} } } };

/** Approval by signal, or by the requester's answer, or the timer (`ms`) ends it. */
const approveOrExpire = tool({
  name: "approve_or_expire",
  description: "",
  input: z.object({ ms: z.number(), ask: z.boolean(), id: z.string() }),
  task: "required",
  async *run({ ms, ask, id }, ctx) {
    // The tokens, for the test (a real tool sends them to whoever approves).
    tokens.set(id, [ctx.signalToken("approval"), ctx.signalToken("veto")]);
    const first = yield* race({
      approval: waitForSignal("approval", Approval),
      veto: waitForSignal("veto", z.string()),
      ...(ask ? { asked: elicit("Approve?", Confirm) } : {}),
      expired: sleep(ms),
    });
    if (first.winner === "approval") return first.value.status === "received" && first.value.value.approved ? "approved" : "rejected";
    if (first.winner === "veto") return `veto ${first.value.status === "received" ? first.value.value : "?"}`;
    if (first.winner === "asked") return `answered ${first.value.action}`;
    // After the race, a second wait on "approval": the race used up wait #0, this one is #1.
    yield* progress(`again ${ctx.signalToken("approval")}`);
    const late = yield* waitForSignal("approval", Approval, { timeoutMs: 30_000 });
    return `expired, then ${late.status}`;
  },
});

const ran: Record<string, number> = {};
const tokens = new Map<string, [string, string]>();
/** A slow step against a short timer: the timer wins, the step is aborted, and never runs again. */
const stepOrTimer = tool({
  name: "step_or_timer",
  description: "",
  input: z.object({ id: z.string() }),
  task: "required",
  async *run({ id }) {
    const first = yield* race({
      work: step(`work-${id}`, async (signal) => {
        ran[id] = (ran[id] ?? 0) + 1;
        await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
        return signal.aborted ? "aborted" : "done";
      }),
      timeout: sleep(50),
    });
    yield* step(`after-${id}`, () => "after");
    return first.winner;
  },
});

async function started(runtime: Runtime, store: Store, args: { ms: number; ask: boolean }) {
  const id = `${Math.random()}`;
  const { taskId } = (await runtime.callTool(approveOrExpire, { name: "approve_or_expire", arguments: { ...args, id } }, INFO)) as { taskId: string };
  // Raced, or already past it: a 50 ms timer can end the race between two polls on a busy
  // machine (a CI flake on PostgreSQL), and the journal only grows, so it cannot be missed.
  await until(async () => {
    const record = await recordOf(store, taskId);
    return record.race !== undefined || ((record.journal as unknown[] | undefined)?.length ?? 0) > 0 ? true : undefined;
  });
  await runtime.idle();
  const [approval, veto] = tokens.get(id)!;
  return { taskId, approval, veto };
}

const refusedBy = (p: Promise<unknown>) => p.then(() => "taken", refusalOf);
const textOf = (t: { result?: { content: Array<{ text: string }> } }) => t.result!.content[0]!.text;

describe.each(stores)("race() in tasks on %s", (name, make) => {
  it.each(["resumed", "replayed"] as const)("a signal wins over a timer; the other wait's token is refused from then on (%s)", async (how) => {
    const { store, a, via } = await signalPair(name, make, open, how, { tools: [approveOrExpire] });
    const { taskId, approval, veto } = await started(a.runtime, store, { ms: 600_000, ask: false });
    expect(await getTask(a.runtime, taskId)).toMatchObject({ status: "working" });
    // What an operator sees while it races, and the journal in words after.
    const admin = createTaskAdmin({ store });
    expect((await admin.show(taskId))?.state).toMatch(/^waiting in a race for signals "approval", "veto" until \d{4}-/);
    expect(await via.runtime.signal(approval, { approved: true })).toEqual({ status: "delivered" });
    expect(textOf(await settledTask(via.runtime, taskId))).toBe("approved");
    const words = (await admin.show(taskId))!.journal.map((r) => `${r.effect}: ${r.value}`);
    expect(words.slice(-2)).toEqual([
      expect.stringMatching(/^race\(\) begins \(race-0\): timers expired at \d{4}-\d\d-\d\dT[\d:.]+Z$/),
      'race() (its winner; waiting on "approval", "veto"): won by "approval": {"status":"received","value":{"approved":true}}',
    ]);
    expect(await refusedBy(via.runtime.signal(veto, "no"))).toBe("signal_used");
    expect(await refusedBy(via.runtime.signal(approval, { approved: false }))).toBe("signal_used");
    expect(a.errors).toEqual([]);
    expect(via.errors).toEqual([]);
  });

  it.each(["resumed", "replayed"] as const)("the timer wins when no value comes; the race's waits are over, the next wait has the next token (%s)", async (how) => {
    const { store, a, via } = await signalPair(name, make, open, how, { tools: [approveOrExpire] });
    const { taskId, approval, veto } = await started(a.runtime, store, { ms: 50, ask: false });
    const again = await until(async () => (await getTask(via.runtime, taskId)).statusMessage?.match(/^again (.+)$/)?.[1]);
    expect(await refusedBy(via.runtime.signal(approval, { approved: true }))).toBe("signal_used");
    expect(await refusedBy(via.runtime.signal(veto, "late"))).toBe("signal_used");
    expect(again).not.toBe(approval);
    // The token is reported before the wait begins: once the task waits on it, a value is
    // delivered (sent sooner it is kept early, 202 — found as a flake on a loaded machine).
    const admin = createTaskAdmin({ store });
    await until(async () => ((await admin.show(taskId))?.state.startsWith('waiting for signal "approval"') ? true : undefined));
    expect(await via.runtime.signal(again, { approved: true })).toEqual({ status: "delivered" });
    expect(textOf(await settledTask(via.runtime, taskId))).toBe("expired, then received");
  });

  it.each(["resumed", "replayed"] as const)("a signal ends a race with an ask: the ask is no longer asked, a late answer changes nothing (%s)", async (how) => {
    const { store, a, via } = await signalPair(name, make, open, how, { tools: [approveOrExpire] });
    const { taskId, veto } = await started(a.runtime, store, { ms: 600_000, ask: true });
    const asking = (await a.runtime.getTask({ taskId }, INFO)) as unknown as { status: string; inputRequests: Record<string, unknown> };
    expect(asking.status).toBe("input_required");
    expect(Object.keys(asking.inputRequests)).toEqual(["race-0.asked"]);
    expect(await via.runtime.signal(veto, "too costly")).toEqual({ status: "delivered" });
    expect(textOf(await settledTask(via.runtime, taskId))).toBe("veto too costly");
    await a.runtime.updateTask({ taskId, inputResponses: { "race-0.asked": accept({ ok: true }) } }, INFO);
    expect(textOf(await settledTask(a.runtime, taskId))).toBe("veto too costly");
  });

  it.each(["resumed", "replayed"] as const)("an answer ends a race with signals: their tokens are refused (%s)", async (how) => {
    const { store, a, via } = await signalPair(name, make, open, how, { tools: [approveOrExpire] });
    const { taskId, approval } = await started(a.runtime, store, { ms: 600_000, ask: true });
    await via.runtime.updateTask({ taskId, inputResponses: { "race-0.asked": accept({ ok: true }) } }, INFO);
    expect(textOf(await settledTask(via.runtime, taskId))).toBe("answered accept");
    expect(await refusedBy(via.runtime.signal(approval, { approved: true }))).toBe("signal_used");
  });

  it("a race's timer ends its asks too: the task leaves input_required without an answer", async () => {
    const { store, a } = await signalPair(name, make, open, "resumed", { tools: [approveOrExpire] });
    const { taskId } = await started(a.runtime, store, { ms: 50, ask: true });
    await until(async () => ((await getTask(a.runtime, taskId)).statusMessage?.startsWith("again ") ? true : undefined));
    expect(((await recordOf(store, taskId)) as { waiting: unknown[] }).waiting).toEqual([]);
  });

  it("two signals of one race sent at once: exactly one is taken, the other told its wait is used", async () => {
    const { store, a, b } = await signalPair(name, make, open, "replayed", { tools: [approveOrExpire] });
    const { taskId, approval, veto } = await started(a.runtime, store, { ms: 600_000, ask: false });
    const verdicts = await Promise.all([refusedBy(a.runtime.signal(approval, { approved: true })), refusedBy(b.runtime.signal(veto, "no"))]);
    expect(verdicts.filter((v) => v === "taken")).toHaveLength(1);
    expect(verdicts.filter((v) => v === "signal_used")).toHaveLength(1);
    const text = textOf(await settledTask(a.runtime, taskId));
    expect(text).toBe(verdicts[0] === "taken" ? "approved" : "veto no");
  });

  it("a step racing a timer: the timer wins, the step is aborted and never runs again", async () => {
    const { store, a, b } = await signalPair(name, make, open, "replayed", { tools: [stepOrTimer] });
    const id = `${name}-${Math.random()}`;
    const { taskId } = (await a.runtime.callTool(stepOrTimer, { name: "step_or_timer", arguments: { id } }, INFO)) as { taskId: string };
    expect(textOf(await settledTask(b.runtime, taskId))).toBe("timeout");
    expect(ran[id]).toBe(1);
    const journal = (await recordOf(store, taskId)).journal as Array<[string, string]>;
    expect(journal.map(([fp]) => fp[0])).toEqual(["X", "Y", "S"]);
    expect(JSON.parse(journal[1]![1])[0]).toBe("timeout");
  });
});

/** Three steps at once: `quick` and `middle` return, `stuck` waits for the test (or its signal). */
const started3: Record<string, number> = {};
const release = new Map<string, () => void>();
const threeAtOnce = tool({
  name: "three_at_once",
  description: "",
  input: z.object({ id: z.string() }),
  task: "required",
  async *run({ id }) {
    const count = (name: string) => (started3[`${id}:${name}`] = (started3[`${id}:${name}`] ?? 0) + 1);
    const got = yield* all({
      quick: step("quick", () => (count("quick"), "q")),
      middle: step("middle", async () => (count("middle"), "m")),
      stuck: step("stuck", (signal) => {
        // The first run's copy never returns (its instance dies); the taker's returns at once.
        if (count("stuck") > 1) return "s";
        return new Promise<string>((resolve) => {
          release.set(id, () => resolve("never recorded"));
          signal.addEventListener("abort", () => resolve("aborted"), { once: true });
        });
      }),
    });
    return `${got.quick}${got.middle}${got.stuck}`;
  },
});

describe.each(stores)("all() over steps in tasks on %s", (name, make) => {
  it("after the owner dies mid-way, the taker runs only the step not recorded; the journal is in the order given", async () => {
    const shared = await make();
    const other = name === "memory" ? shared : await make();
    open.push(shared);
    if (other !== shared) open.push(other);
    const dying = killable(shared);
    const a = signalInstance(dying.store, open, { tools: [threeAtOnce] });
    const b = signalInstance(other, open, { tools: [threeAtOnce] });
    const id = `${name}-${Math.random()}`;
    const { taskId } = (await a.runtime.callTool(threeAtOnce, { name: "three_at_once", arguments: { id } }, INFO)) as { taskId: string };
    // Both quick steps are recorded (in order, before the stuck one): then the owner dies.
    await until(async () => (((await recordOf(other, taskId)).journal as unknown[]).length === 2 ? true : undefined));
    dying.kill();
    expect(textOf(await settledTask(b.runtime, taskId))).toBe("qms");
    expect([started3[`${id}:quick`], started3[`${id}:middle`], started3[`${id}:stuck`]]).toEqual([1, 1, 2]);
    expect(((await recordOf(other, taskId)).journal as Array<[string, string]>).map(([fp]) => fp)).toEqual(["Squick", "Smiddle", "Sstuck"]);
    release.get(id)?.();
  });
});
