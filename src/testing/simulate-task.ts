import type { ToolDefinition } from "../authoring/definitions.js";
import { type AttemptEffect, type Effect, isEffect, type StepEffect } from "../authoring/effects.js";
import { shapeToolResult } from "../authoring/results.js";
import { checkReplay } from "../replay/double-run.js";
import { NondeterminismError } from "../replay/errors.js";
import type { Runtime } from "../runtime/runtime.js";
import { canonicalJson } from "../state/index.js";
import type { Store } from "../store/index.js";
import { taskRecord, type TaskRecord } from "../tasks/record/record.js";
import { signalToken } from "../tasks/signals.js";
import { capabilityCheck, type InputRequest } from "../wire/index.js";

// simulate() past runAsTask(): the call followed as a task — its asks answered through
// tasks/update, its sleeps and signal timeouts passed at once on a fake clock, scripted signals
// delivered — and, once it completes, replayed from its journal as an instance taking it over
// would, the result compared.

/** Wait-ending value for a scripted signal: the wait times out instead of receiving a value. */
export const signalTimeout: unique symbol = Symbol("mcp-yield.signalTimeout");

/**
 * A scripted answer that leaves its ask unanswered this round: the client answers the others.
 * The way to let another branch of a `race(...)` win — a later ask, a scripted signal, or the
 * race's timer (the fake clock moves to it when nothing else can end the race).
 */
export const noAnswer: unique symbol = Symbol("mcp-yield.noAnswer");

/**
 * Values for `waitForSignal(name, ...)`, by name: one value for every wait on that name, a list
 * for successive waits, or a function of the wait's ordinal (from 0). `signalTimeout` makes the
 * wait time out.
 */
export type ScriptedSignals = Record<string, unknown>;

/** What simulate learned about the task the call became. */
export interface SimulatedTask {
  taskId: string;
  /** Statuses seen by tasks/get, in order, repeats dropped. */
  statuses: string[];
  /** Fake time passed for sleeps, retry delays and signal timeouts (ms). */
  sleptMs: number;
  /** Signals delivered (timeouts not counted). */
  signals: number;
}

/** The simulated clock and store a simulate-made runtime runs on. */
export interface SimulatedWorld {
  store: Store;
  /** Move the fake clock forward to `at` (never back). */
  advanceTo(at: number): void;
  now(): number;
}

/** `def` whose scripted steps fail: the first `n` attempts of each named step throw. */
export function withFailingSteps<D extends ToolDefinition>(def: D, failSteps: Readonly<Record<string, number>>): D {
  const names = Object.keys(failSteps);
  if (names.length === 0) return def;
  const fail = (effect: StepEffect | AttemptEffect): Effect => {
    const attempt = effect.kind === "attempt" ? effect.attempt : 1;
    if (attempt > (failSteps[effect.name] ?? 0)) return effect;
    const error = new Error(`simulated failure of step "${effect.name}" (attempt ${attempt})`);
    return { ...effect, fn: () => Promise.reject(error) };
  };
  const original = def.run as (input: unknown, ctx: unknown) => Iterator<unknown, unknown, unknown> | AsyncIterator<unknown, unknown, unknown>;
  async function* run(input: unknown, ctx: unknown): AsyncGenerator<Effect, unknown, unknown> {
    const inner = original(input, ctx);
    let next = await inner.next();
    while (next.done !== true) {
      const value = next.value;
      const effect = isEffect(value) && (value.kind === "step" || value.kind === "attempt") && Object.hasOwn(failSteps, value.name) ? fail(value) : value;
      let sent: unknown;
      try {
        sent = yield effect as Effect;
      } catch (error) {
        if (inner.throw === undefined) throw error;
        next = await inner.throw(error);
        continue;
      }
      next = await inner.next(sent);
    }
    return next.value;
  }
  return { ...def, run } as D;
}

function scriptedSignal(signals: ScriptedSignals, name: string, ordinal: number): { value: unknown } | { timeout: true } | undefined {
  if (!Object.hasOwn(signals, name)) return undefined;
  const entry = signals[name];
  const value = typeof entry === "function" ? (entry as (n: number) => unknown)(ordinal) : Array.isArray(entry) ? (ordinal < entry.length ? entry[ordinal] : undefined) : entry;
  if (value === undefined) return undefined;
  return value === signalTimeout ? { timeout: true } : { value };
}

async function recordOf(store: Store, taskId: string): Promise<TaskRecord> {
  const raw = await store.get(`task:${taskId}`);
  const parsed = raw === undefined ? undefined : taskRecord.safeParse(JSON.parse(raw));
  if (!parsed?.success) throw new Error(`simulate: task ${taskId} is not in the store`);
  return parsed.data;
}

export interface FollowTask {
  runtime: Runtime;
  world: SimulatedWorld | undefined;
  def: ToolDefinition;
  input: unknown;
  taskId: string;
  info: { clientCapabilities: unknown; principal?: string };
  answer: (request: InputRequest, key: string, round: number) => unknown;
  signals: ScriptedSignals;
  /** Check every author failure so far (throws unless they are to be returned). */
  checkErrors: () => void;
  /** Replay the finished task from its journal and compare. */
  verify: boolean;
  /** The runtime's `signals.baseUrl` (the replay makes the same URLs). */
  signalBaseUrl: string | undefined;
  maxPolls: number;
}

/** Follow the task to its end; the final CallToolResult and what happened on the way. */
export async function followTask({
  runtime,
  world,
  def,
  input,
  taskId,
  info,
  answer,
  signals,
  checkErrors,
  verify,
  signalBaseUrl,
  maxPolls,
}: FollowTask): Promise<{ result: unknown; task: SimulatedTask }> {
  const task: SimulatedTask = { taskId, statuses: [], sleptMs: 0, signals: 0 };
  let asked = 0;
  for (let poll = 0; poll < maxPolls; poll++) {
    const t = (await runtime.getTask({ taskId }, info as never)) as unknown as { status: string; result?: Record<string, unknown>; error?: unknown; inputRequests?: Record<string, InputRequest> };
    checkErrors();
    if (task.statuses.at(-1) !== t.status) task.statuses.push(t.status);
    if (t.status === "completed") {
      const { resultType: _r, ...result } = t.result ?? {};
      if (verify && world !== undefined) await replayTask(world, runtime, def, input, taskId, signalBaseUrl);
      return { result, task };
    }
    if (t.status === "failed" || t.status === "cancelled") throw new Error(`simulate: the task ended ${t.status}${t.error ? `: ${JSON.stringify(t.error)}` : ""}`);
    if (t.status === "input_required") {
      asked++;
      // Task keys carry a suffix when a key is asked again (keys are unique for the task's life).
      const given = Object.entries(t.inputRequests ?? {}).map(([key, request]) => [key, answer(request, key.replace(/~\d+$/, ""), asked)] as const);
      const inputResponses = Object.fromEntries(given.filter(([, a]) => a !== noAnswer));
      if (Object.keys(inputResponses).length > 0) {
        await runtime.updateTask({ taskId, inputResponses }, info as never);
        continue;
      }
      // Every ask left unanswered: a race's signal or timer must end it.
      const r = world === undefined ? undefined : await recordOf(world.store, taskId);
      if (r?.race === undefined) throw new Error(`simulate: every ask of the task is scripted noAnswer, and nothing else can end its wait (${Object.keys(t.inputRequests ?? {}).join(", ")})`);
      if (!(await endRace(r))) throw new Error(`simulate: the task's race has only unanswered asks left: script an answer, a signal for it, or race a timer`);
      continue;
    }
    await runtime.idle();
    if (world === undefined) {
      await new Promise((r) => setTimeout(r, 10));
      continue;
    }
    const r = await recordOf(world.store, taskId);
    if (r.status !== "working" || r.lease !== undefined) continue;
    if (r.race !== undefined && r.arrived === undefined) {
      if (!(await endRace(r)))
        throw new Error(
          `simulate: the task waits in a race for ${r.race.w.map((w) => `signal "${w.name}" (wait #${w.i})`).join(", ")}, with no timer, and no value is scripted for any (options.signals)`,
        );
    } else if (r.awaits !== undefined && r.arrived === undefined) {
      const scripted = scriptedSignal(signals, r.awaits.name, r.awaits.i);
      if (scripted === undefined) {
        if (r.awaits.deadline === undefined)
          throw new Error(`simulate: the task waits for signal "${r.awaits.name}" (wait #${r.awaits.i}) with no timeout, and no value is scripted for it (options.signals)`);
        task.sleptMs += Math.max(0, r.awaits.deadline - world.now());
        world.advanceTo(r.awaits.deadline);
      } else if ("timeout" in scripted) {
        if (r.awaits.deadline === undefined) throw new Error(`simulate: signalTimeout is scripted for "${r.awaits.name}", but that wait has no timeoutMs`);
        task.sleptMs += Math.max(0, r.awaits.deadline - world.now());
        world.advanceTo(r.awaits.deadline);
      } else {
        await runtime.signal(signalToken(runtime.codec, r, r.awaits.name, r.awaits.i), scripted.value);
        task.signals++;
      }
    } else if (r.wake !== undefined) {
      task.sleptMs += Math.max(0, r.wake - world.now());
      world.advanceTo(r.wake);
    }
  }
  throw new Error(`simulate: the task did not end within ${maxPolls} polls`);

  /** End the race the task waits in as the world would: a scripted signal for one of its waits (in order), else its timer. */
  async function endRace(r: TaskRecord): Promise<boolean> {
    if (r.race === undefined) return false;
    for (const w of r.race.w) {
      const scripted = scriptedSignal(signals, w.name, w.i);
      if (scripted === undefined || "timeout" in scripted) continue;
      await runtime.signal(signalToken(runtime.codec, r, w.name, w.i), scripted.value);
      task.signals++;
      return true;
    }
    if (r.race.until === undefined || world === undefined) return false;
    task.sleptMs += Math.max(0, r.race.until - world.now());
    world.advanceTo(r.race.until);
    return true;
  }
}

/** The finished task replayed from its journal, as an instance taking it over would: the same result, or a NondeterminismError. */
async function replayTask(world: SimulatedWorld, runtime: Runtime, def: ToolDefinition, input: unknown, taskId: string, signalBaseUrl: string | undefined): Promise<void> {
  const r = await recordOf(world.store, taskId);
  const shape = (value: unknown) => {
    try {
      return canonicalJson(shapeToolResult(def, value));
    } catch (error) {
      return `(the result could not be shaped: ${error instanceof Error ? error.message : String(error)})`;
    }
  };
  const parsed = def.input.parse(input);
  try {
    await checkReplay(
      {
        round: 0,
        start: (ctx) => def.run(parsed as never, ctx),
        principal: r.principal,
        callId: r.call,
        declared: capabilityCheck(r.caps),
        trace: new Map(),
        seenTimes: [],
        task: { signalToken: (name, i) => signalToken(runtime.codec, r, name, i), ...(signalBaseUrl !== undefined ? { signalUrl: (token: string) => signalBaseUrl + token } : {}) },
      },
      // The result as the task kept it: what its own run shaped.
      { type: "complete", journal: r.journal, result: canonicalJson(r.result) },
      shape,
    );
  } catch (error) {
    if (!(error instanceof NondeterminismError)) throw error;
    throw new Error(
      `simulate: the task is not deterministic: replayed from its journal, as an instance taking it over would, ${error.message.replace(/^Round \d+ is not deterministic: (replayed from its state, )?/, "")}`,
      { cause: error },
    );
  }
}
