import { callWithInput, ClientError, createFetchSender, type InputHandlers, type Send } from "mcp-yield/client";
import type { Instance } from "./cluster.js";

/**
 * Task calls spread over instances: every request — the tools/call that starts the task and
 * every tasks/get and tasks/update after it — goes to a random instance. A request whose
 * connection fails (an instance killed or restarting) is retried on another one.
 */

export interface TaskLoadReport {
  calls: number;
  completed: number;
  errors: Array<{ call: number; tool: string; error: string }>;
  wrong: Array<{ call: number; tool: string; detail: string }>;
  /** Tasks still not terminal at the deadline. */
  stuck: number;
  /** Completed tasks that another instance later reported differently (another status or result). */
  inconsistent: Array<{ taskId: string; detail: string }>;
  requests: number;
  retries: number;
  inFlight: number;
  /** Slowest call, seconds (a takeover after a crash shows here). */
  slowestSeconds: number;
}

const TASKS = { "io.modelcontextprotocol/tasks": {} };

function randomSend(instances: Instance[], report: TaskLoadReport, signal: AbortSignal): Send {
  const senders = instances.map((i) => createFetchSender(i.url, { capabilities: { elicitation: {}, extensions: TASKS }, timeoutMs: 30_000 }));
  const send = async (method: string, params: Record<string, unknown>) => {
    for (let attempt = 0; ; attempt++) {
      const index = Math.floor(Math.random() * senders.length);
      try {
        report.requests++;
        return await senders[index]!(method, params);
      } catch (error) {
        if (!(error instanceof ClientError && error.reason === "transport") || attempt >= 40 || signal.aborted) throw error;
        report.retries++;
        await new Promise((r) => setTimeout(r, 50 + 25 * attempt));
      }
    }
  };
  return Object.assign(send, { capabilities: { elicitation: {}, extensions: TASKS } });
}

const TOOLS = ["generate_report", "confirm_delete", "multi_input"] as const;

/** What each call asks for, and the one final text its answers allow. */
function plan(call: number): { tool: (typeof TOOLS)[number]; args: Record<string, unknown>; expected: RegExp } {
  const tool = TOOLS[call % TOOLS.length]!;
  if (tool === "generate_report") {
    const topic = `topic-${call}`;
    return { tool, args: { topic }, expected: new RegExp(`^Report on "${topic}": ${3 + (topic.length % 7)} pages, https://reports\\.example/[\\w-]+\\.pdf$`) };
  }
  if (tool === "confirm_delete") return { tool, args: { filename: `file-${call}.txt` }, expected: new RegExp(`^Deleted file-${call}\\.txt\\.$`) };
  return { tool, args: {}, expected: new RegExp(`^Name: caller-${call}; proceed: true$`) };
}

export async function runTaskLoad(
  instances: Instance[],
  options: {
    calls: number;
    thinkMs: [number, number];
    deadlineMs: number;
    onStart?: (r: TaskLoadReport) => void;
    /** Settles when every instance is up again (a restart under way): the final check waits for it. */
    settled?: () => Promise<void>;
  },
): Promise<TaskLoadReport> {
  const report: TaskLoadReport = { calls: options.calls, completed: 0, errors: [], wrong: [], stuck: 0, inconsistent: [], requests: 0, retries: 0, inFlight: 0, slowestSeconds: 0 };
  options.onStart?.(report);
  const deadline = AbortSignal.timeout(options.deadlineMs);
  const think = () => new Promise((r) => setTimeout(r, options.thinkMs[0] + Math.random() * (options.thinkMs[1] - options.thinkMs[0])));
  const finished: Array<{ taskId: string; text: string }> = [];
  await Promise.all(
    Array.from({ length: options.calls }, async (_, call) => {
      const { tool, args, expected } = plan(call);
      // Its own signal per call (following the shared deadline): one listener each.
      const signal = AbortSignal.any([deadline]);
      const send = randomSend(instances, report, signal);
      let taskId: string | undefined;
      const handlers: InputHandlers = {
        elicit: async (params, { key }) => {
          await think();
          const base = key.replace(/~\d+$/, "");
          const content: Record<string, string | boolean> = base === "options" ? { format: "pdf", confirm: true } : base === "name" ? { name: `caller-${call}` } : { confirm: true };
          return params.mode === "url" ? { action: "accept" } : { action: "accept", content };
        },
      };
      const started = Date.now();
      report.inFlight++;
      try {
        const result = await callWithInput<{ content: Array<{ text?: string }>; isError?: boolean }>(send, "tools/call", { name: tool, arguments: args }, handlers, {
          maxRounds: 20,
          signal,
          onTask: (t) => (taskId = t.taskId),
        });
        const text = result.content.map((c) => c.text).join(" ");
        if (!expected.test(text) || result.isError) report.wrong.push({ call, tool, detail: `final text ${JSON.stringify(text)}` });
        else {
          report.completed++;
          if (taskId) finished.push({ taskId, text });
        }
      } catch (error) {
        if (deadline.aborted) report.stuck++;
        else report.errors.push({ call, tool, error: error instanceof Error ? error.message : String(error) });
      } finally {
        report.inFlight--;
        report.slowestSeconds = Math.max(report.slowestSeconds, (Date.now() - started) / 1000);
      }
    }),
  );
  // None completed twice: every instance reports each finished task with the same one result.
  // Asked only once every instance listens again (one may still be restarting after the crash).
  await options.settled?.();
  for (const { taskId, text } of finished) {
    for (const instance of instances) {
      let seen: { status?: string; result?: { content: Array<{ text?: string }> } };
      try {
        seen = (await createFetchSender(instance.url, { capabilities: { extensions: TASKS } })("tasks/get", { taskId })) as typeof seen;
      } catch (error) {
        // The real error, cause included, not "undefined undefined".
        const cause = error instanceof Error && error.cause instanceof Error ? ` (cause: ${error.cause.message})` : "";
        report.inconsistent.push({ taskId, detail: `${instance.url}: tasks/get failed: ${error instanceof Error ? error.message : String(error)}${cause}` });
        continue;
      }
      const again = seen.result?.content.map((c) => c.text).join(" ");
      if (seen.status !== "completed" || again !== text) report.inconsistent.push({ taskId, detail: `${instance.url}: ${seen.status} ${JSON.stringify(again)}` });
    }
  }
  return report;
}
