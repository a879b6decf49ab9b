import { afterEach, describe, expect, it } from "vitest";
import { createRuntime, createTaskAdmin, type Runtime, type Store, StoreError, type ToolDefinition } from "mcp-yield";
import { drive, SHAPES, type Shape, type StepRuns, type Target } from "./fault-shapes.js";
import { testKey } from "./keys.js";

// The edges of a call, as the fault-injection suite (fault-suite.ts) sees the store's faults:
// for every tool shape, on memory, Redis and PostgreSQL (test/faults/edges-*.test.ts):
// - "abort at operation k": the client's connection drops while the call's k-th store operation
//   is under way (for every k): the request's signal fires, its response never arrives, and the
//   client sends the same request again (every first request carries an idempotency key);
// - "abort in step k": the same, while the call's k-th step body runs;
// - "killed in step k" (foreground shapes): the instance dies while its k-th step body runs —
//   the body never returns, its store goes dead (no renewal lands) — and the client sends the
//   same request to a second instance, which takes the round over once its lease has passed;
// - "30 s apart": two instances whose clocks differ by 30 s, every request sent to one and
//   then, again, to the other (a duplicated delivery; the first under an idempotency key), the
//   two answers compared;
// - "one key, three at once": every request sent three times at once to two instances, the first
//   with one `_meta.idempotencyKey`, the three answers compared.
// After each run no step body may have run twice under one `ctx.idempotencyKey` — except the one
// documented case: the step whose body was running when the request was aborted or its instance
// died runs once more, under the same key — and the client must reach the fault-free run's result.

const keys = [testKey("edge", 21)];
/** A short round lease, so that a takeover after an instance died takes a moment, not 15 s. */
const ROUND_LEASE_MS = 300;
const SKEW_MS = 30_000;
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await closeSoon(o);
});

/** Close, but do not wait for a round that will never end (a killed instance's). */
const closeSoon = (o: { close(): Promise<void> }) => Promise.race([o.close().catch(() => {}), new Promise((r) => setTimeout(r, 1000))]);

type Edge = { kind: "abort-op" | "abort-step" | "killed"; at: number } | { kind: "skew" } | { kind: "one-key" };

const name = (edge: Edge | undefined) => (edge === undefined ? "fault-free" : "at" in edge ? `${edge.kind} ${edge.at}` : edge.kind);

/** `inner` with every operation counted (`onOperation` told first), and dead — every operation refused — once `kill()` is called. */
function watchedStore(inner: Store, onOperation: (n: number) => void) {
  let count = 0;
  let dead = false;
  const store = new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== "function" || property === "close" || property === "time") return typeof value === "function" ? value.bind(target) : value;
      return async (...args: unknown[]) => {
        if (dead) throw new StoreError("store_unavailable", "this instance died");
        onOperation(++count);
        return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
      };
    },
  });
  return {
    store,
    get count() {
      return count;
    },
    kill: () => (dead = true),
  };
}

async function runOnce(makeStore: () => Promise<Store>, shape: Shape, edge?: Edge) {
  const inner = await makeStore();
  const log: StepRuns["log"] = new Map();
  // The requests in flight, each with its own controller (its connection): an abort drops them.
  const inFlight = new Set<AbortController>();
  let dropped = 0; // requests the edge aborted (none when no request was in flight then: a task running on its own)
  const dropAll = () => {
    for (const c of inFlight) {
      c.abort();
      dropped++;
    }
  };
  let steps = 0;
  let doubled: string | undefined; // the step that was running when the edge came
  let killed: (() => void) | undefined;
  const dead = new Promise<void>((resolve) => (killed = resolve));
  const watched = watchedStore(inner, (n) => {
    if (edge?.kind === "abort-op" && n === edge.at) dropAll();
  });
  const service = { up: false };
  const ownerRuns: StepRuns = {
    by: "owner",
    log,
    service,
    onStart: (key) => {
      steps++;
      if (edge === undefined || !("at" in edge) || steps !== edge.at) return undefined;
      if (edge.kind === "abort-step") {
        doubled = key;
        dropAll();
      }
      if (edge.kind === "killed") {
        doubled = key;
        watched.kill();
        killed!();
        return "hang";
      }
      return undefined;
    },
  };
  const { state, ...rest } = (shape.options ?? {}) as { state?: Record<string, unknown> };
  const instance = (on: Store, skew = 0): Runtime => {
    const clock = () => Date.now() + skew;
    return createRuntime({
      state: { keys, ...state, ...(skew !== 0 ? { clock } : {}) },
      store: on,
      onError: () => {},
      roundLeaseMs: ROUND_LEASE_MS,
      tasks: { leaseMs: 300, sweepMs: 50, pollIntervalMs: 100 },
      ...(skew !== 0 ? { clock } : {}),
      ...rest,
    });
  };
  const first = instance(watched.store, edge?.kind === "skew" ? SKEW_MS : 0);
  const second = instance(inner);
  open.push(inner, first, second);
  const def = shape.def(ownerRuns);
  const secondDef = shape.def({ by: "second", log, service });
  first.define([def]);
  second.define([secondDef]);
  // Each instance runs its own definition (a process has its own).
  const defs = new Map<Runtime, ToolDefinition>([
    [first, def],
    [second, secondDef],
  ]);
  const target = clientOf(first, second, edge, { inFlight, dead, defs });
  // An operator on a connection of its own: fixes the dependency, retries a held task.
  const operator = async (taskId: string) => {
    service.up = true;
    await createTaskAdmin({ store: inner }).retry(taskId);
  };
  const result = await drive(target, def, shape, undefined, undefined, operator);
  await first.idle();
  await second.idle();
  for (const o of open.splice(open.length - 3).reverse()) await closeSoon(o);
  return { result, runs: log, operations: watched.count, steps, doubled, dropped };
}

/** Whether two answers are the same answer (a task's is its id, a round's its whole JSON). */
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * How the client reaches the two instances under `edge`: a request whose connection dropped is
 * sent again (its answer never arrived); after the first instance died, to the second.
 */
function clientOf(
  first: Runtime,
  second: Runtime,
  edge: Edge | undefined,
  { inFlight, dead, defs }: { inFlight: Set<AbortController>; dead: Promise<void>; defs: Map<Runtime, ToolDefinition> },
): Target {
  let isDead = false;
  void dead.then(() => (isDead = true));
  let sent = 0;
  const key = `edge-${Math.random().toString(36).slice(2)}`;
  /** One request to `to`, as a connection: its answer, or `lost` if the connection dropped or the instance died. */
  const once = async <T>(to: Runtime, send: (r: Runtime, signal: AbortSignal) => Promise<T>): Promise<{ lost: true } | { lost: false; value: T }> => {
    const controller = new AbortController();
    inFlight.add(controller);
    try {
      const answer = send(to, controller.signal).then(
        (value) => ({ ok: true as const, value }),
        (error: unknown) => ({ ok: false as const, error }),
      );
      type Got = Awaited<typeof answer> | "died";
      const died: Promise<Got> = dead.then((): Got | Promise<Got> => (to === first ? "died" : answer));
      const got: Got = await Promise.race<Got>([answer, died]);
      if (got === "died" || controller.signal.aborted) return { lost: true };
      if (!got.ok) throw got.error;
      return { lost: false, value: got.value };
    } finally {
      inFlight.delete(controller);
    }
  };
  /** A request sent until an answer arrives (a lost one is sent again, as it was). */
  const delivered = async <T>(to: () => Runtime, send: (r: Runtime, signal: AbortSignal) => Promise<T>): Promise<T> => {
    for (let i = 0; i < 50; i++) {
      const got = await once(to(), send);
      if (!got.lost) return got.value;
    }
    throw new Error("no answer after 50 connections");
  };
  const live = () => (isDead ? second : first);
  const alternate = () => (sent++ % 2 === 0 ? first : second);
  return {
    async callTool(_def: ToolDefinition, params: Record<string, unknown>, info: Record<string, unknown>) {
      // A first request repeated is the same call only under an idempotency key: every first
      // request carries one, as the client loop's do.
      const keyed = params.requestState === undefined ? { ...params, _meta: { idempotencyKey: key } } : params;
      const call = (r: Runtime, signal: AbortSignal) => r.callTool(defs.get(r)!, keyed, { ...info, signal });
      if (edge?.kind === "skew") {
        const to = alternate();
        const a = await delivered(() => to, call);
        const b = await delivered(() => (to === first ? second : first), call);
        if (!same(a, b)) throw new Error(`instances 30 s apart answered the same request differently: ${JSON.stringify(a).slice(0, 200)} / ${JSON.stringify(b).slice(0, 200)}`);
        return b;
      }
      if (edge?.kind === "one-key") {
        const answers = await Promise.all([first, second, first].map((r) => retried(() => delivered(() => r, call))));
        if (!answers.every((a) => same(a, answers[0]))) throw new Error(`three identical requests got different answers: ${answers.map((a) => JSON.stringify(a).slice(0, 120)).join(" / ")}`);
        return answers[0];
      }
      return delivered(live, call);
    },
    getTask: (params, info) => delivered(edge?.kind === "skew" ? alternate : live, (r) => r.getTask(params, info)),
    updateTask: (params, info) => delivered(edge?.kind === "skew" ? alternate : live, (r) => r.updateTask(params, info)),
    signal: (token, value) => delivered(live, (r) => r.signal(token, value)),
  } as Target;
}

/** Repeated while the answer is "the first is still running" (the drive's own retries see one answer for three requests). */
async function retried<T>(send: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await send();
    } catch (error) {
      const reason = (error as { data?: { reason?: unknown } }).data?.reason;
      if (i > 200 || (reason !== "idempotency_in_progress" && reason !== "round_in_progress")) throw error;
      await new Promise((r) => setTimeout(r, 5));
    }
  }
}

/** The suite on one store: `makeStore` gives a fresh, empty namespace of it each time. */
export function edgeSuite(storeName: string, makeStore: () => Promise<Store>): void {
  describe(`the edges of a call on the ${storeName} store`, () => {
    it.each(SHAPES.map((s) => [s.name, s] as const))(
      "%s: aborted at every point, killed mid-step, clocks 30 s apart, one key three times at once",
      async (_n, shape) => {
        const clean = await runOnce(makeStore, shape);
        expect(clean.result.outcome).toHaveProperty("text");
        const edges: Edge[] = [{ kind: "skew" }, { kind: "one-key" }];
        for (let at = 1; at <= clean.operations; at++) edges.push({ kind: "abort-op", at });
        for (let at = 1; at <= clean.steps; at++) edges.push({ kind: "abort-step", at });
        if (shape.tasks !== true) for (let at = 1; at <= clean.steps; at++) edges.push({ kind: "killed", at });
        const violations: string[] = [];
        let reruns = 0;
        let aborted = 0;
        for (const edge of edges) {
          const run = await runOnce(makeStore, shape, edge);
          if (run.dropped > 0 && edge.kind.startsWith("abort")) aborted++;
          const twice = [...run.runs].filter(([, starts]) => starts.length > 1);
          // The step running when the request was dropped (or its instance died) may run once more, under its key.
          const inFlight = twice.length === 1 && twice[0]![0] === run.doubled && twice[0]![1].length === 2;
          if (process.env.EDGE_DEBUG) console.log(name(edge), run.doubled, JSON.stringify([...run.runs].map(([k, s]) => [k.slice(-12), s.map((x) => x.by)])));
          // Each step under one key, as fault-free: a call started again would run them under others.
          if (run.runs.size !== clean.runs.size) violations.push(`${name(edge)}: steps ran under ${run.runs.size} keys, fault-free under ${clean.runs.size}`);
          if (inFlight) reruns++;
          else if (twice.length > 0) violations.push(`${name(edge)}: ${twice.map(([k, s]) => `${k} ran ${s.length} times (by ${s.map((x) => x.by).join(", ")})`).join("; ")}`);
          if (!("text" in run.result.outcome)) violations.push(`${name(edge)}: the client was left with ${run.result.outcome.error}`);
          else if (run.result.outcome.text !== (clean.result.outcome as { text: string }).text)
            violations.push(`${name(edge)}: result ${JSON.stringify(run.result.outcome.text)}, fault-free ${JSON.stringify((clean.result.outcome as { text: string }).text)}`);
        }
        console.log(
          `${storeName} / ${shape.name}: ${edges.length} edge runs (${clean.operations} abort points at operations, ${clean.steps} in steps, ${aborted} of which found a request in flight${shape.tasks === true ? "" : `, ${clean.steps} kills`}, skew, one key), ${violations.length} violations, ${reruns} steps in flight run again`,
        );
        expect(violations).toEqual([]);
      },
      300_000,
    );
  });
}
