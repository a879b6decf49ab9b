import { all, elicit, ProtocolError, runAsTask, step, tool, toolError } from "mcp-yield";
import { z } from "zod";

/**
 * The tools the public conformance suite's tasks scenarios call by name (../shared/TASKS.md),
 * written with the runtime like any other tool.
 */

/** Resolves after `ms`, or rejects as soon as `signal` aborts (a cancelled task stops at once). */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const abort = () => (clearTimeout(timer), reject(signal.reason));
    const timer = setTimeout(() => (signal.removeEventListener("abort", abort), resolve()), ms);
    signal.addEventListener("abort", abort, { once: true });
  });
}

const UserName = z.object({ name: z.string() });
const Confirm = z.object({ confirm: z.boolean() });

export const greet = tool({
  name: "greet",
  description: "Greets by name (never a task)",
  input: z.object({ name: z.string() }),
  *run({ name }) {
    return `Hello, ${name}!`;
  },
});

export const slowCompute = tool({
  name: "slow_compute",
  description: "Sleeps for `seconds`, then answers: a task when the client supports tasks",
  input: z.object({ seconds: z.number().min(0).max(3600), label: z.string().optional() }),
  task: "optional",
  async *run({ seconds, label }) {
    yield* step("compute", (signal) => sleep(seconds * 1000, signal));
    return `Computed ${label ? `"${label}" ` : ""}in ${seconds}s`;
  },
});

export const failingJob = tool({
  name: "failing_job",
  description: "Runs about a second as a task, then reports a tool error",
  input: z.object({}),
  task: "required",
  async *run() {
    yield* step("work", (signal) => sleep(1000, signal));
    return toolError("The job failed: the input data was inconsistent.");
  },
});

export const protocolErrorJob = tool({
  name: "protocol_error_job",
  description: "A task that ends in a protocol-level error",
  input: z.object({}),
  task: "required",
  async *run() {
    yield* step("work", (signal) => sleep(200, signal));
    throw new ProtocolError(-32603, "The job's worker crashed", { reason: "job_crashed" });
  },
});

export const confirmDelete = tool({
  name: "confirm_delete",
  description: "Asks to confirm, inside the task, before deleting a file",
  input: z.object({ filename: z.string().min(1) }),
  task: "required",
  *run({ filename }) {
    const answer = yield* elicit(`Delete ${filename}?`, Confirm, { key: "confirm" });
    if (answer.action !== "accept" || !answer.content.confirm) return `Kept ${filename}.`;
    const deleted = yield* step("delete", () => `Deleted ${filename}.`);
    return deleted;
  },
});

export const multiInput = tool({
  name: "multi_input",
  description: "A task that waits on two answers at once",
  input: z.object({}),
  task: "required",
  *run() {
    const { who, ok } = yield* all({
      who: elicit("What is your name?", UserName, { key: "name" }),
      ok: elicit("Proceed?", Confirm, { key: "proceed" }),
    });
    return `Name: ${who.action === "accept" ? who.content.name : who.action}; proceed: ${ok.action === "accept" ? ok.content.confirm : ok.action}`;
  },
});

export const toolWithTask = tool({
  name: "test_tool_with_task",
  description: "Asks for a name over plain rounds, then continues as a task",
  input: z.object({}),
  task: "required",
  taskFrom: "runAsTask",
  *run() {
    const who = yield* elicit("What is your name?", UserName, { key: "user_name" });
    const name = who.action === "accept" ? who.content.name : "stranger";
    yield* runAsTask(`Preparing a greeting for ${name}`);
    const greeting = yield* step("greet", () => `Hello, ${name}! (prepared as a task)`);
    return greeting;
  },
});

export const taskFixtures = [greet, slowCompute, failingJob, protocolErrorJob, confirmDelete, multiInput, toolWithTask];
