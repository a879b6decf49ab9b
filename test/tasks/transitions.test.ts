import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { TaskRecord } from "../../src/tasks/record/record.js";
import * as t from "../../src/tasks/record/transitions.js";
import { taskRecord } from "../support/task-record.js";

// The task record's transitions as pure functions: what each does to a record, without a store.

const holder: t.Holder = { owner: "me", run: "r1" };
const other: t.Holder = { owner: "them", run: "r9" };
const lease = (h: t.Holder, until = 10_000): t.Lease => ({ owner: h.owner, ...(h.run !== undefined ? { run: h.run } : {}), until });
let runs = 0;
const newRun: t.NewRun = (r) => ({ lease: lease({ owner: "me", run: `n${++runs}` }), runs: (r.runs ?? 0) + 1 });

function running(over: Partial<TaskRecord> = {}): TaskRecord {
  return taskRecord({ lease: lease(holder), runs: 1, ...over });
}
const ask = { method: "elicitation/create", params: { message: "?", requestedSchema: { type: "object", properties: {} } } } as const;
const asks = (keys: string[]): t.AsksOutcome => ({
  journal: [["S1", "1"]],
  outstanding: Object.fromEntries(keys.map((k) => [k, `fp-${k}`])),
  partial: undefined,
  requests: Object.fromEntries(keys.map((k) => [k, ask])),
});

describe("task transitions", () => {
  it("name every state: running, asleep, awaiting a signal, input_required and the three terminal ones", () => {
    expect(t.stateOf(running())).toMatchObject({ status: "working", phase: "running" });
    const asleep = t.sleep(running(), holder, [], 5000) as TaskRecord;
    expect(t.stateOf(asleep)).toEqual({ status: "working", phase: "asleep", wake: 5000 });
    const waiting = t.awaitSignal(running(), holder, { journal: [], name: "ok", ordinal: 0, timeoutMs: 100 }, 1000) as TaskRecord;
    expect(t.stateOf(waiting)).toEqual({ status: "working", phase: "awaiting_signal", signal: "ok", ordinal: 0, deadline: 1100 });
    const parked = t.park(running(), holder, asks(["a", "b"]), "nonce") as TaskRecord;
    expect(t.stateOf(parked)).toEqual({ status: "input_required", wireKeys: ["a", "b"] });
    expect(t.stateOf(t.finish(running(), { status: "completed", result: { content: [] } }, holder) as TaskRecord).status).toBe("completed");
    expect(t.stateOf(t.finish(running(), { status: "failed", message: "m", error: { code: -1, message: "m" } }, holder) as TaskRecord).status).toBe("failed");
    expect(t.stateOf(t.cancel(parked, 0) as TaskRecord)).toEqual({ status: "cancelled" });
  });

  it("start a task working under a new run, with nothing asked and its input as stored", () => {
    const r = t.start(
      { id: "T1", def: { name: "x", version: "2" }, stored: { args: {}, input: "{}" }, principal: "alice", callId: "c1", caps: { elicitation: {} }, message: "Rendering", journal: [["S1", "1"]] },
      5000,
      { ttlMs: 60_000, pollMs: 250 },
      newRun,
    );
    expect(r).toMatchObject({
      id: "T1",
      tool: "x",
      version: "2",
      input: "{}",
      principal: "alice",
      call: "c1",
      status: "working",
      message: "Rendering",
      created: 5000,
      updated: 5000,
      ttlMs: 60_000,
      pollMs: 250,
      runs: 1,
      waiting: [],
      used: [],
    });
    expect(t.stateOf(r)).toMatchObject({ status: "working", phase: "running", cancelling: false });
    expect(r.journal).toEqual([["S1", "1"]]);
  });

  it("let only the run holding the lease record progress, park, sleep, wait, complete or fail", () => {
    const r = running();
    const byOther = [
      t.renew(r, other, lease(other)),
      t.recordSteps(r, other, [], lease(other)),
      t.reportProgress(r, other, "m", lease(other)),
      t.park(r, other, asks(["a"]), "n"),
      t.sleep(r, other, [], 1),
      t.awaitSignal(r, other, { journal: [], name: "s", ordinal: 0, timeoutMs: undefined }, 0),
      t.release(r, other),
      t.finish(r, { status: "completed", result: {} }, other),
      t.finish(r, { status: "failed", message: "m", error: { code: 1, message: "m" } }, other),
    ];
    expect(byOther).toEqual(byOther.map(() => false));
    // The same instance's stale run is fenced too.
    expect(t.renew(r, { owner: "me", run: "r0" }, lease(holder))).toBe(false);
    expect(t.renew(r, holder, lease(holder, 20_000))).toMatchObject({ lease: { until: 20_000 } });
  });

  it("let a cancel acknowledged first win over an outcome that arrives after it, and cancel by anyone", () => {
    const marked = t.cancel(running(), 0) as TaskRecord; // its lease is live: marked, the run stops at its heartbeat
    expect(marked).toMatchObject({ status: "working", cancel: true });
    expect(t.cancel(marked, 0)).toBe(false);
    expect(t.finish(marked, { status: "completed", result: { content: [] } }, holder)).toMatchObject({ status: "cancelled", message: "Cancelled" });
    expect(t.finish(running(), { status: "cancelled" })).toMatchObject({ status: "cancelled" });
    // A task whose owner is gone (lease run out) is cancelled at once.
    expect(t.cancel(running({ lease: lease(holder, 5) }), 10)).toMatchObject({ status: "cancelled", cancel: true });
  });

  it("answer partly, then wholly: the task works again under a new run; unknown keys change nothing", () => {
    const parked = t.park(running(), holder, asks(["a", "b"]), "n") as TaskRecord;
    expect(t.answer(parked, new Map([["zzz", 1]]), newRun)).toBe(false);
    const half = t.answer(parked, new Map([["a", { action: "accept", content: {} }]]), newRun) as TaskRecord;
    expect(t.stateOf(half)).toEqual({ status: "input_required", wireKeys: ["b"] });
    const all = t.answer(half, new Map([["b", { action: "decline" }]]), newRun) as TaskRecord;
    expect(all).toMatchObject({ status: "working", runs: 2 });
    expect(all.lease?.owner).toBe("me");
    expect(t.answer(all, new Map([["b", 1]]), newRun)).toBe(false);
  });

  it("wake only what is due: asleep past its time, or running under a lease that ran out", () => {
    const asleep = t.sleep(running(), holder, [], 5000) as TaskRecord;
    expect(t.wake(asleep, 4999, newRun)).toBe(false);
    expect(t.wake(asleep, 5000, newRun)).toMatchObject({ status: "working", runs: 2 });
    expect(t.wake(asleep, 5000, newRun) && (t.wake(asleep, 5000, newRun) as TaskRecord).wake).toBeUndefined();
    expect(t.wake(running({ lease: lease(holder, 100) }), 50, newRun)).toBe(false);
    expect(t.wake(running({ lease: lease(holder, 100) }), 100, newRun)).toMatchObject({ runs: 2 });
    expect(t.wake(running({ lease: lease(holder, 0), cancel: true }), 100, newRun)).toBe(false);
  });

  it("close a wait once the journal records it: its token is refused from then on", () => {
    const waiting = t.awaitSignal(running(), holder, { journal: [], name: "ok", ordinal: 0, timeoutMs: undefined }, 0) as TaskRecord;
    const woken = t.signal(waiting, "ok", 0, { yes: true }, newRun);
    expect(woken.arrived).toEqual({ name: "ok", i: 0, value: { yes: true } });
    // The value came and a run took it: the task runs (the wait is not over until the journal records it).
    expect(t.stateOf(woken)).toMatchObject({ status: "working", phase: "running" });
    const recorded = t.withJournal(woken, [["Wok", "{}"]]);
    expect(recorded.closed).toEqual(["ok#0"]);
    expect(recorded.awaits).toBeUndefined();
    expect(recorded.arrived).toBeUndefined();
  });

  it("never change a terminal record, and never issue a wire key twice (property, random sequences)", () => {
    type Step = { kind: "park"; keys: string[] } | { kind: "answer"; keys: string[] } | { kind: "sleep" | "wake" | "complete" | "fail" | "cancel" | "renew" | "release" };
    const key = fc.constantFrom("a", "b", "c");
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.record({ kind: fc.constant("park" as const), keys: fc.uniqueArray(key, { minLength: 1, maxLength: 3 }) }),
      fc.record({ kind: fc.constant("answer" as const), keys: fc.uniqueArray(key, { minLength: 1, maxLength: 3 }) }),
      fc.record({ kind: fc.constantFrom("sleep" as const, "wake" as const, "complete" as const, "fail" as const, "cancel" as const, "renew" as const, "release" as const) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), (steps) => {
        let r = running({ lease: lease({ owner: "me", run: "n0" }) });
        let h: t.Holder = { owner: "me", run: "n0" };
        const issued: string[] = [];
        for (const s of steps) {
          const before = r;
          let next: TaskRecord | false;
          switch (s.kind) {
            case "park":
              next = t.park(r, h, asks(s.keys), "n");
              if (next) issued.push(...next.waiting.map((w) => w.wire));
              break;
            case "answer":
              next = t.answer(r, new Map(r.waiting.filter((w) => s.keys.includes(w.key)).map((w) => [w.wire, { action: "decline" }])), newRun);
              break;
            case "sleep":
              next = t.sleep(r, h, r.journal, 10);
              break;
            case "wake":
              next = t.wake(r, 1e12, newRun);
              break;
            case "complete":
              next = t.finish(r, { status: "completed", result: { content: [] } }, h);
              break;
            case "fail":
              next = t.finish(r, { status: "failed", message: "m", error: { code: 1, message: "m" } }, h);
              break;
            case "cancel":
              next = t.cancel(r, 1e12);
              break;
            case "renew":
              next = t.renew(r, h, lease(h));
              break;
            case "release":
              next = t.release(r, h);
              break;
          }
          if (next === false) continue;
          if (["completed", "failed", "cancelled"].includes(before.status)) throw new Error(`a terminal record changed by ${s.kind}`);
          r = next;
          if (r.lease !== undefined) h = { owner: r.lease.owner, run: r.lease.run };
        }
        expect(new Set(issued).size).toBe(issued.length);
      }),
    );
  });
});
