import { testKey } from "./keys.js";
import { afterEach, describe, expect, it } from "vitest";
import { createRuntime, createTaskAdmin, type RoundTrace, type Runtime, type Store } from "mcp-yield";
import { drive, SHAPES, type Shape, type StepRuns } from "./fault-shapes.js";
import { type FaultKind, faultyStore } from "./faulty-store.js";
import { coveredMs, type SlowOperation, timedStore } from "./timed-store.js";

// The fault-injection suite: for every tool shape, fail the k-th store operation of a call for
// every k in turn (on memory, Redis and PostgreSQL: test/faults-*.test.ts) — refused at once,
// timed out on the client and landing later, or stalled past the task lease and then done — and check after each run that no step body ran twice under one
// key, that the client reached the fault-free run's result (retrying only as the errors say),
// and that nothing was left stuck. The one documented exception: a task whose run stalled past
// its lease is taken over, and the step whose result the stalled run had not yet recorded runs
// again — once more, under the same key (what a crash at that moment does too). A stall the
// machine makes itself — a store operation, or this process's event loop, slower than half the
// lease while a run holds its task — is the same fault uninjected: measured and shown in the
// timeline, it excuses a step run again across it, and it does not count against the time a
// call has to end in (a loaded 2-core machine, CI on a slow day: store operations of seconds).

const keys = [testKey("f", 33)];
const KINDS: FaultKind[] = ["error", "late", "pause"];
const LEASE_MS = 300;
const SWEEP_MS = 50;
// Past the lease and a sweep: long enough for a takeover to happen while the operation waits.
const PAUSE_MS = LEASE_MS + 2 * SWEEP_MS + 50;
// A run begins a step only with at least half its lease ahead (the engine renews first): an
// operation or event-loop stall longer than that can lose the lease with the step in flight.
const NATURAL_STALL_MS = LEASE_MS / 2;
// How long a call has to end, besides the time the machine itself stalled — up to three times
// as long again: on a machine stalling all the time the stalls would otherwise stretch the
// limit as fast as time passes, and a call really stuck would never be called stuck.
const CALL_MS = 15_000;
const STALLS_COUNTED_MS = 3 * CALL_MS;
// Runs in flight at once. Each run has a namespace of the store and instances of its own (nothing
// else is shared but the signing keys), and a run spends nearly all its time waiting — on a stall
// past the lease, a sleep, a retry delay, a signal's timeout. Four at a time took a quarter of the
// time one at a time did; eight took the faults project from 163 s to 134 s at the same CPU (124 s),
// with no violation quiet or beside two busy loops (232 s there).
// MCP_YIELD_FAULT_RUNS=1 runs them one at a time, to tell a run's fault from a neighbour's load.
const RUNS_AT_ONCE = Math.max(1, Number(process.env.MCP_YIELD_FAULT_RUNS ?? 8) || 1);
// What a run opened and has not closed yet: closed by afterEach if a test ends early.
const open = new Set<{ close(): Promise<void> }>();
afterEach(async () => {
  for (const o of [...open].reverse()) {
    open.delete(o);
    await o.close();
  }
});

async function runOnce(makeStore: () => Promise<Store>, shape: Shape, fault?: { kind: FaultKind; at: number }) {
  const inner = await makeStore();
  // Each instance's store operations slower than a natural stall, noted (timed-store.ts).
  const slow: SlowOperation[] = [];
  const store = faultyStore(timedStore(inner, "owner", NATURAL_STALL_MS, slow));
  const options = shape.options ?? {};
  const { state, ...rest } = options as { state?: Record<string, unknown> };
  // What each instance's task runs did and when, and when this process's event loop stalled: the
  // timeline printed with a violation (a step run twice is explained, or not, by these).
  const rounds: Array<{ by: string; trace: RoundTrace }> = [];
  const lag = lagSampler();
  const instance = (on: Store, by: string): Runtime =>
    createRuntime({
      state: { keys, ...state },
      store: on,
      onError: () => {},
      onRound: (trace) => rounds.push({ by, trace }),
      tasks: { leaseMs: LEASE_MS, sweepMs: SWEEP_MS, pollIntervalMs: 100 },
      ...rest,
    });
  const runtime = instance(store, "owner");
  // A second instance on the same store, unfaulted, looking at the task as a client on another
  // connection would (tasks/get takes over a task whose lease ran out): the successor when the
  // first instance stalls or loses its store.
  const standby = instance(timedStore(inner, "standby", NATURAL_STALL_MS, slow), "standby");
  const mine = [inner, runtime, standby];
  for (const o of mine) open.add(o);
  const log: StepRuns["log"] = new Map();
  const service = { up: false };
  const def = shape.def({ by: "owner", log, service });
  runtime.define([def]);
  standby.define([shape.def({ by: "standby", log, service })]);
  // An operator on a connection of its own (unfaulted): fixes the dependency, retries the task.
  const operator = async (taskId: string) => {
    service.up = true;
    await createTaskAdmin({ store: inner }).retry(taskId);
  };
  let watching: ReturnType<typeof setInterval> | undefined;
  const watch = (taskId: string) => {
    watching ??= setInterval(() => void standby.getTask({ taskId }, { clientCapabilities: shape.capabilities }).catch(() => {}), SWEEP_MS);
  };
  store.arm(fault ? { kind: fault.kind, at: fault.at, pauseMs: PAUSE_MS } : { kind: "error" });
  // The time the machine stalled on its own does not count against the call's limit.
  const limits = {
    requests: 200,
    get ms() {
      return CALL_MS + Math.min(STALLS_COUNTED_MS, coveredMs(naturalStalls(slow, lag.stalls)));
    },
  };
  const result = await drive(runtime, def, shape, watch, limits, operator);
  clearInterval(watching);
  lag.stop();
  const operations = store.count;
  store.disarm();
  await store.settled();
  await runtime.idle();
  await standby.idle();
  // Closed run by run (not at the test's end): hundreds of runs would otherwise hold hundreds of
  // connections (PostgreSQL allows 100).
  for (const o of mine.reverse()) {
    open.delete(o);
    await o.close();
  }
  return { result, runs: log, operations, failed: [...store.failed], stalledAt: store.stalledAt, rounds, stalls: lag.stalls, natural: naturalStalls(slow, lag.stalls) };
}

/** The stalls the machine made: slow store operations (by instance) and event-loop stalls (every instance: "process"). */
function naturalStalls(slow: readonly SlowOperation[], stalls: ReadonlyArray<{ at: number; ms: number }>): SlowOperation[] {
  return [...slow, ...stalls.filter((s) => s.ms > NATURAL_STALL_MS).map((s) => ({ by: "process", op: "event loop", at: s.at, ms: s.ms }))];
}

type Run = Awaited<ReturnType<typeof runOnce>>;
type Starts = Array<{ by: string; at: number }>;

/**
 * A task's step run more than once, each run after the first explained by a stall of the
 * instance that ran it before: one of its store operations, or the event loop, stalled past
 * half the lease somewhere between its start and the next run's — the lease could run out with
 * the step in flight, and its successor runs it again (the documented exception, uninjected).
 */
function rerunAcrossNaturalStalls(run: Run, starts: Starts): boolean {
  return starts.slice(1).every((next, i) => run.natural.some((s) => (s.by === starts[i]!.by || s.by === "process") && s.at < next.at && s.at + s.ms > starts[i]!.at));
}

/** This process's event-loop stalls over `STALL_MS` while a run goes (start, ms; performance.now()). */
const STALL_MS = 60;
function lagSampler() {
  const stalls: Array<{ at: number; ms: number }> = [];
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    if (now - last - 10 > STALL_MS) stalls.push({ at: last, ms: Math.round(now - last - 10) });
    last = now;
  }, 10);
  return { stalls, stop: () => clearInterval(timer) };
}

/** A violating run's timeline, times in ms after the stall began (or the first round). */
function timeline(run: Run): string {
  const zero = run.stalledAt ?? (run.rounds[0] ? run.rounds[0].trace.startedAt - performance.timeOrigin : 0);
  const t = (at: number) => Math.round(at - zero);
  const lines = [
    ...run.rounds.map(({ by, trace }) => ({
      at: trace.startedAt - performance.timeOrigin,
      text: `${by} ${trace.taskId ? "task run" : trace.method} ${trace.path} round ${trace.round}: ${trace.outcome}${trace.error ? ` (${trace.error.reason})` : ""}, ${trace.steps.length} steps, ${Math.round(trace.ms)} ms`,
    })),
    ...[...run.runs].flatMap(([key, starts]) => starts.map((s) => ({ at: s.at, text: `${s.by} starts step ${key}` }))),
    ...run.stalls.map((s) => ({ at: s.at, text: `event loop stalled ${s.ms} ms` })),
    ...run.natural.filter((s) => s.by !== "process").map((s) => ({ at: s.at, text: `${s.by}'s ${s.op} took ${s.ms} ms` })),
  ].sort((a, b) => a.at - b.at);
  return lines.map((l) => `\n    ${t(l.at)} ms: ${l.text}`).join("");
}

/** `run` over every item, at most `atOnce` at a time; the results in the items' order. */
async function inBatches<T, R>(items: readonly T[], atOnce: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await run(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(atOnce, items.length) }, worker));
  return results;
}

/** The suite on one store: `makeStore` gives a fresh, empty namespace of it each time. */
export function faultSuite(_name: string, makeStore: () => Promise<Store>): void {
  describe(`fault injection on the ${_name} store`, () => {
    it.each(SHAPES.map((s) => [s.name, s] as const))(
      "%s: every operation failed in turn, every way",
      async (_n, shape) => {
        const clean = await runOnce(makeStore, shape);
        expect(clean.result.outcome, timeline(clean)).toHaveProperty("text");
        expect(clean.operations).toBeGreaterThan(2); // the store is really in the call's path
        const cleanTwice = [...clean.runs.values()].filter((starts) => starts.length > 1);
        expect(
          cleanTwice.every((starts) => shape.tasks === true && rerunAcrossNaturalStalls(clean, starts)),
          timeline(clean),
        ).toBe(true);
        const violations: string[] = [];
        let reruns = 0;
        let naturalReruns = cleanTwice.length > 0 ? 1 : 0; // runs, as below (not steps)
        const faults = KINDS.flatMap((kind) => Array.from({ length: clean.operations }, (_, i) => ({ kind, at: i + 1 })));
        const runs = await inBatches(faults, RUNS_AT_ONCE, (fault) => runOnce(makeStore, shape, fault));
        for (const [i, run] of runs.entries()) {
          const { kind, at } = faults[i]!;
          const where = `${kind} fault at operation ${at}/${clean.operations} (${run.failed.join(", ") || "not reached"})`;
          const twice = [...run.runs].filter(([, starts]) => starts.length > 1);
          // A stalled task run: the step it had started (or finished but not recorded) while its
          // store stalled may run once more under its key, by the run that took the task over
          // (on the other instance, or a new run on this one). So the doubled step's first run is
          // the stalled instance's, begun before its store answered again; a step the stalled run
          // began after that, beside its successor, is a violation.
          const stallEnd = (run.stalledAt ?? Infinity) + PAUSE_MS;
          // Steps at once (a shape that runs them): each of those in flight may run once more.
          const inFlightAtStall = ([, starts]: (typeof twice)[number]) => starts.length === 2 && starts[0]!.by === "owner" && starts[0]!.at < stallEnd;
          const injected = kind === "pause" && shape.tasks === true && (twice.length === 1 || shape.parallelSteps === true);
          const natural = (entry: (typeof twice)[number]) => shape.tasks === true && rerunAcrossNaturalStalls(run, entry[1]);
          if (twice.length > 0 && injected && twice.every(inFlightAtStall)) reruns++;
          else if (twice.length > 0 && twice.every((entry) => (injected && inFlightAtStall(entry)) || natural(entry))) naturalReruns++;
          else if (twice.length > 0)
            violations.push(
              `${where}: ${twice.map(([k, starts]) => `${k} ran ${starts.length} times (${starts.map((s) => `by the ${s.by} ${run.stalledAt === undefined ? "" : `${Math.round(s.at - run.stalledAt)} ms after the stall began`}`).join(", ")})`).join("; ")}${timeline(run)}`,
            );
          if (!("text" in run.result.outcome)) violations.push(`${where}: the client was left with ${run.result.outcome.error}`);
          else if (run.result.outcome.text !== (clean.result.outcome as { text: string }).text)
            violations.push(`${where}: result ${JSON.stringify(run.result.outcome.text)}, fault-free ${JSON.stringify((clean.result.outcome as { text: string }).text)}`);
        }
        console.log(
          `${_name} / ${shape.name}: ${clean.operations} operations × ${KINDS.length} fault kinds = ${clean.operations * KINDS.length} runs, ${violations.length} violations, ${reruns} in-flight steps run again after a stall${naturalReruns > 0 ? `, ${naturalReruns} runs with steps run again across the machine's own stalls` : ""}`,
        );
        expect(violations).toEqual([]);
      },
      300_000,
    );
  });
}
