import { z } from "zod";
import { all, elicit, now, patched, progress, race, runAsTask, type Runtime, sleep, step, tool, type ToolDefinition, uuid, waitForSignal } from "mcp-yield";

/**
 * The tool shapes the fault-injection suite drives, each with the answers a client gives it. A
 * step counts its runs under `ctx.idempotencyKey(name)`: one key per call and step, the same on
 * every attempt, so "ran twice" is a count above one under one key.
 */

/** Where steps are counted: each key's runs — which instance (`by`) started it, and when (performance.now()). */
export interface StepRuns {
  /** The instance these definitions run on. */
  by: string;
  log: Map<string, Array<{ by: string; at: number }>>;
  /** Told as each step body starts, with its key: `"hang"` makes the body never return (its instance died there). */
  onStart?: (key: string) => "hang" | undefined;
  /** A dependency an operator fixes before retrying a held task (shared by the run's instances). */
  service?: { up: boolean };
}
const Ok = z.object({ ok: z.boolean() });
const TASKS = { "io.modelcontextprotocol/tasks": {} };

export interface Shape {
  name: string;
  def: (runs: StepRuns) => ToolDefinition;
  /** The answer for each ask key. */
  answers: Record<string, unknown>;
  capabilities: Record<string, unknown>;
  /** Whether the call runs as a task (at some point): a lease, and takeovers, apply. */
  tasks?: boolean;
  /**
   * What the client sends when the task shows `signals:<token> <token>...` as its status
   * message: for each token, its values in order (one its wait's schema refuses is sent on past;
   * the token is done once a value was taken or kept, or the token was used).
   */
  signals?: unknown[][];
  /**
   * Steps run at the same time (`all(...)` over steps, a race of steps): a stalled run may have
   * several in flight, and each may run once more after a takeover (the exception the suite
   * allows for one step in flight, for each of them).
   */
  parallelSteps?: boolean;
  /**
   * The task is held for an operator (its step ran out of attempts): the suite's operator fixes
   * the step's dependency and retries it (`createTaskAdmin().retry`) on a connection of its own.
   */
  operator?: boolean;
  /** Runtime options the shape needs (a spill threshold, short leases). */
  options?: Record<string, unknown>;
}

function counted<T>(runs: StepRuns, key: string, value: T): T {
  runs.log.set(key, [...(runs.log.get(key) ?? []), { by: runs.by, at: performance.now() }]);
  if (runs.onStart?.(key) === "hang") return new Promise<never>(() => {}) as T;
  return value;
}

const yes = { action: "accept", content: { ok: true } };

export const SHAPES: Shape[] = [
  {
    name: "foreground, three rounds with steps",
    capabilities: { elicitation: {} },
    answers: { a: yes, b: yes },
    def: (runs) =>
      tool({
        name: "rounds",
        description: "",
        input: z.object({}),
        async *run(_i, ctx) {
          const quote = yield* step("quote", () => counted(runs, ctx.idempotencyKey("quote"), 120));
          yield* elicit(`Pay ${quote}?`, Ok, { key: "a" });
          const id = yield* uuid();
          const charge = yield* step("charge", () => counted(runs, ctx.idempotencyKey("charge"), `R-${quote}`));
          yield* elicit("Email the receipt?", Ok, { key: "b" });
          const mail = yield* step("mail", () => counted(runs, ctx.idempotencyKey("mail"), "sent"));
          return `${charge} ${mail} ${id.length}`;
        },
      }),
  },
  {
    // Round 2 runs no step (its response is kept with one write, no claim); round 3 claims right
    // before its step.
    name: "foreground, a round without a step, then one with a step",
    capabilities: { elicitation: {} },
    answers: { a: yes, b: yes },
    def: (runs) =>
      tool({
        name: "lazy",
        description: "",
        input: z.object({}),
        async *run(_i, ctx) {
          yield* elicit("Who?", Ok, { key: "a" });
          const id = yield* uuid();
          yield* elicit("Sure?", Ok, { key: "b" });
          const charge = yield* step("charge", () => counted(runs, ctx.idempotencyKey("charge"), `R-${id.length}`));
          return `${charge}`;
        },
      }),
  },
  {
    name: "foreground, a journal spilled to the store",
    capabilities: { elicitation: {} },
    answers: { a: yes, b: yes },
    options: { spillBytes: 256, state: { maxTokenBytes: 2048 } },
    def: (runs) =>
      tool({
        name: "spill",
        description: "",
        input: z.object({}),
        async *run(_i, ctx) {
          yield* elicit("Start?", Ok, { key: "a" });
          const blob = yield* step("blob", () => counted(runs, ctx.idempotencyKey("blob"), "x".repeat(4000)));
          yield* elicit("Again?", Ok, { key: "b" });
          const tail = yield* step("tail", () => counted(runs, ctx.idempotencyKey("tail"), String(blob).length));
          return `blob ${tail}`;
        },
      }),
  },
  {
    name: "foreground, then a task at runAsTask()",
    tasks: true,
    capabilities: { elicitation: {}, extensions: TASKS },
    answers: { a: yes },
    def: (runs) =>
      tool({
        name: "become",
        description: "",
        input: z.object({}),
        task: "optional",
        taskFrom: "runAsTask",
        async *run(_i, ctx) {
          yield* elicit("Go?", Ok, { key: "a" });
          const before = yield* step("before", () => counted(runs, ctx.idempotencyKey("before"), 1));
          yield* runAsTask("working");
          const after = yield* step("after", () => counted(runs, ctx.idempotencyKey("after"), 2));
          return `before ${before} after ${after}`;
        },
      }),
  },
  {
    name: "a task that parks on an ask and resumes",
    tasks: true,
    capabilities: { elicitation: {}, extensions: TASKS },
    answers: { confirm: yes },
    def: (runs) =>
      tool({
        name: "parks",
        description: "",
        input: z.object({}),
        task: "required",
        async *run(_i, ctx) {
          const draft = yield* step("draft", () => counted(runs, ctx.idempotencyKey("draft"), "D1"));
          const at = yield* now();
          const ok = yield* elicit(`Publish ${draft}?`, Ok, { key: "confirm" });
          const done = yield* step("publish", () => counted(runs, ctx.idempotencyKey("publish"), `${draft}:${ok.action}`));
          return `${done} ${typeof at}`;
        },
      }),
  },
  {
    name: "a task with a patched() branch after a step",
    tasks: true,
    capabilities: { elicitation: {}, extensions: TASKS },
    answers: { confirm: yes },
    def: (runs) =>
      tool({
        name: "patchy",
        description: "",
        input: z.object({}),
        task: "required",
        async *run(_i, ctx) {
          yield* step("prepare", () => counted(runs, ctx.idempotencyKey("prepare"), 1));
          const v2 = yield* patched("v2");
          const ok = yield* elicit("Confirm?", Ok, { key: "confirm" });
          const out = yield* step(v2 ? "new" : "old", () => counted(runs, ctx.idempotencyKey(v2 ? "new" : "old"), v2 ? "new" : "old"));
          return `${out} ${ok.action}`;
        },
      }),
  },
  {
    name: "a durable task: a retried step, a sleep, a signal",
    tasks: true,
    capabilities: { extensions: TASKS },
    answers: {},
    signals: [["go"]],
    def: (runs) =>
      tool({
        name: "durable",
        description: "",
        input: z.object({}),
        task: "required",
        async *run(_i, ctx) {
          // Each attempt counts under its own key: no attempt may run twice.
          const a = yield* step(
            "flaky",
            (_s, attempt) => {
              counted(runs, `${ctx.idempotencyKey("flaky")}#${attempt}`, 0);
              if (attempt < 2) throw new Error("503");
              return "A";
            },
            { retry: { attempts: 3, initialMs: 20 } },
          );
          yield* sleep(30);
          yield* progress(`signals:${ctx.signalToken("go")}`);
          const got = yield* waitForSignal("go", z.string(), { timeoutMs: 10_000 });
          const b = yield* step("after", () => counted(runs, ctx.idempotencyKey("after"), "B"));
          return `${a} ${got.status === "received" ? got.value : "timeout"} ${b}`;
        },
      }),
  },
  {
    name: "signals: one sent early, one refused, one racing its timeout",
    tasks: true,
    capabilities: { extensions: TASKS },
    answers: {},
    // `early` is sent at once (the task is in a step or asleep: kept, 202); `late` gets a value
    // its schema refuses, then a good one, while its 40 ms timeout runs: either may win.
    signals: [[{ v: "E" }], [5, "L"]],
    def: (runs) =>
      tool({
        name: "signals",
        description: "",
        input: z.object({}),
        task: "required",
        async *run(_i, ctx) {
          yield* progress(`signals:${ctx.signalToken("early")} ${ctx.signalToken("late")}`);
          const a = yield* step("first", () => counted(runs, ctx.idempotencyKey("first"), "A"));
          yield* sleep(5);
          const early = yield* waitForSignal("early", z.object({ v: z.string() }), { timeoutMs: 10_000 });
          const b = yield* step("mid", () => counted(runs, ctx.idempotencyKey("mid"), "B"));
          // Received or timed out, the result is the same: what may not differ is a step run twice.
          yield* waitForSignal("late", z.string(), { timeoutMs: 40 });
          const c = yield* step("after", () => counted(runs, ctx.idempotencyKey("after"), "C"));
          return `${a} ${early.status === "received" ? early.value.v : "timeout"} ${b} ${c}`;
        },
      }),
  },
  {
    name: "race and parallel steps: a signal against its timer, steps at once, steps racing",
    tasks: true,
    parallelSteps: true,
    capabilities: { extensions: TASKS },
    answers: {},
    // Sent at once: kept early, taken in the race, or refused as used once the timer won.
    signals: [["R"]],
    def: (runs) =>
      tool({
        name: "racing",
        description: "",
        input: z.object({}),
        task: "required",
        async *run(_i, ctx) {
          yield* progress(`signals:${ctx.signalToken("go")}`);
          const at = (name: string) => ctx.idempotencyKey(name);
          const got = yield* all(
            { a: step("pa", () => counted(runs, at("pa"), "A")), b: step("pb", async () => counted(runs, at("pb"), "B")), c: step("pc", () => counted(runs, at("pc"), "C")) },
            { concurrency: 2 },
          );
          // Whichever wins, the result is the same: what may not differ is a step run twice.
          yield* race({ go: waitForSignal("go", z.string()), timer: sleep(40) });
          const won = yield* race({
            fast: step("fast", () => counted(runs, at("fast"), "F")),
            slow: step("slow", (signal) => counted(runs, at("slow"), new Promise<string>((resolve) => signal.addEventListener("abort", () => resolve("S"), { once: true })))),
          });
          const d = yield* step("after", () => counted(runs, at("after"), "D"));
          return `${got.a}${got.b}${got.c} ${won.winner} ${d}`;
        },
      }),
  },
  {
    name: "a task held when its step runs out of attempts, retried by an operator",
    tasks: true,
    operator: true,
    capabilities: { extensions: TASKS },
    answers: {},
    def: (runs) =>
      tool({
        name: "held",
        description: "",
        input: z.object({}),
        task: "required",
        async *run(_i, ctx) {
          const a = yield* step("before", () => counted(runs, ctx.idempotencyKey("before"), "A"));
          // Each attempt counts under its own key, and those after the operator's fix under
          // another (the retry starts the step over at attempt 1): none may run twice.
          const b = yield* step(
            "charge",
            (_s, attempt) => {
              const up = runs.service?.up === true;
              counted(runs, `${ctx.idempotencyKey("charge")}#${attempt}${up ? " after the fix" : ""}`, 0);
              if (!up) throw new Error("card service down");
              return "B";
            },
            { retry: { attempts: 2, initialMs: 10 } },
          );
          const c = yield* step("after", () => counted(runs, ctx.idempotencyKey("after"), "C"));
          return `${a}${b}${c}`;
        },
      }),
  },
];

/** Reasons a client is told to retry the same request. */
const RETRY = new Set(["store_unavailable", "store_full", "round_in_progress", "idempotency_in_progress"]);

/** What `drive` sends its requests to: a runtime, or a client's view of several (test/support/edge-suite.ts). */
export type Target = Pick<Runtime, "callTool" | "getTask" | "updateTask" | "signal">;

export interface Drive {
  /** The final text, or the error the client was left with. */
  outcome: { text: string } | { error: string };
  /** Requests the client sent. */
  requests: number;
}

function reasonOf(error: unknown): string | undefined {
  const data = (error as { data?: { reason?: unknown } }).data;
  return typeof data?.reason === "string" ? data.reason : undefined;
}

/**
 * A client that does what the protocol and our errors tell it: answer asks, retry a request
 * that failed with a retryable reason, follow a task with tasks/get and tasks/update. Bounded
 * in requests and time: a call still open at the end is "stuck".
 */
export async function drive(
  runtime: Target,
  def: ToolDefinition,
  shape: Shape,
  onTask: (taskId: string) => void = () => {},
  limits = { requests: 200, ms: 15_000 },
  /** What an operator does with a task held for one ("needs attention"): fix and retry it. */
  operator?: (taskId: string) => Promise<void>,
): Promise<Drive> {
  const info = { clientCapabilities: shape.capabilities };
  const started = Date.now();
  let requests = 0;
  const attempt = async <T>(send: () => Promise<T>): Promise<T> => {
    for (;;) {
      if (requests >= limits.requests || Date.now() - started > limits.ms) throw new Error(`stuck after ${requests} requests`);
      requests++;
      try {
        return await send();
      } catch (error) {
        if (!RETRY.has(reasonOf(error) ?? "")) throw error;
        await new Promise((r) => setTimeout(r, 2));
      }
    }
  };
  try {
    let params: Record<string, unknown> = { name: def.name, arguments: {} };
    for (;;) {
      const result = (await attempt(() => runtime.callTool(def, params, info))) as Record<string, unknown>;
      if (result.resultType === "input_required") {
        const asks = result.inputRequests as Record<string, unknown>;
        params = { name: def.name, arguments: {}, requestState: result.requestState, inputResponses: Object.fromEntries(Object.keys(asks).map((k) => [k, shape.answers[k]])) };
        continue;
      }
      if (result.resultType !== "task") return { outcome: { text: outcomeText(result) }, requests };
      const taskId = result.taskId as string;
      onTask(taskId);
      // Per token: how many of its values were sent on, and whether it is done.
      const sending = (shape.signals ?? []).map((values) => ({ values, next: 0, done: false, mayHaveLanded: false }));
      let holds = 0;
      for (;;) {
        const task = (await attempt(() => runtime.getTask({ taskId }, info))) as unknown as Record<string, unknown>;
        const message = String(task.statusMessage ?? "");
        if (task.status === "working" && message.startsWith("signals:")) {
          const tokens = message.slice("signals:".length).split(" ");
          for (const [i, s] of sending.entries()) {
            if (s.done) continue;
            // A send the store failed may have landed all the same (its write's answer lost): if
            // the token is used, or the task ended, by the next send, whether the value arrived
            // is for the task's result to show — which the suite compares with fault-free's.
            const sent = await attempt(() =>
              runtime.signal(tokens[i]!, s.values[s.next]).catch((e: unknown) => {
                if (RETRY.has(reasonOf(e) ?? "")) s.mayHaveLanded = true;
                throw e;
              }),
            ).then(
              () => "sent",
              (e: unknown) => reasonOf(e) ?? String(e),
            );
            // Taken or kept, or used (an earlier send got through, or the wait timed out): done.
            // Refused by the schema: the next value. Another value being checked: again later.
            if (sent === "sent" || sent === "signal_used" || (sent === "signal_expired" && s.mayHaveLanded)) s.done = true;
            else if (sent === "signal_invalid_value") s.done = ++s.next >= s.values.length;
            else if (sent !== "signal_not_waiting") throw new Error(`the signal was refused: ${sent}`);
          }
        }
        if (task.status === "working" && message.startsWith("needs attention: ")) {
          if (operator === undefined || ++holds > 3) return { outcome: { error: `held: ${message}` }, requests };
          await operator(taskId);
        }
        if (task.status === "completed") return { outcome: { text: outcomeText(task.result as Record<string, unknown>) }, requests };
        if (task.status === "failed" || task.status === "cancelled") return { outcome: { error: `task ${String(task.status)}: ${JSON.stringify(task.error ?? task.statusMessage)}` }, requests };
        if (task.status === "input_required") {
          const asks = task.inputRequests as Record<string, unknown>;
          // Task keys may carry a suffix (keys are unique for the task's life): answer by base key.
          const inputResponses = Object.fromEntries(Object.keys(asks).map((k) => [k, shape.answers[k.replace(/~\d+$/, "")]]));
          await attempt(() => runtime.updateTask({ taskId, inputResponses }, info));
        }
        if (requests >= limits.requests || Date.now() - started > limits.ms) throw new Error(`stuck: task still ${String(task.status)} after ${requests} requests`);
        await new Promise((r) => setTimeout(r, 5));
      }
    }
  } catch (error) {
    return { outcome: { error: error instanceof Error ? error.message : String(error) }, requests };
  }
}

function outcomeText(result: Record<string, unknown>): string {
  const content = result.content as Array<{ text?: string }> | undefined;
  return `${result.isError === true ? "isError: " : ""}${(content ?? []).map((c) => c.text).join(" ")}`;
}
