import { z } from "zod";
import { createRuntime, progress, type Runtime, type Store, step, tool, waitForSignal } from "mcp-yield";
import { testKey } from "./keys.js";
import { until } from "./instances.js";

// What the signal tests share: an approval task that puts its wake-up URL in its status message
// (a fixture: a real tool sends it to the approver, never to the requester), two instances on
// one store — the one that parked the task (a delivery there resumes it) and another (a delivery
// there replays it from the journal) — and the waits for the states the tests need.

export const SIGNAL_BASE = "https://example.test/signals/";
export const TASKS_INFO = { clientCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } };
const keys = [testKey("s", 29)];

const Approval = z.object({ approved: z.boolean() });
export const approval = tool({
  name: "approve",
  description: "",
  input: z.object({ timeoutMs: z.number().optional() }),
  task: "required",
  async *run({ timeoutMs }, ctx) {
    yield* step("draft", () => "D1");
    yield* progress(`Approve at ${ctx.signalUrl("approval")}`);
    const got = yield* waitForSignal("approval", Approval, timeoutMs === undefined ? {} : { timeoutMs });
    if (got.status === "timeout") return "timed out";
    return got.value.approved ? "approved" : "rejected";
  },
});

export type TaskView = { status: string; statusMessage?: string; result?: { content: Array<{ text: string }>; isError?: boolean } };

/** How a test instance differs: the tools it serves, a principal's share of the store, its key ring. */
export interface SignalInstanceOptions {
  tools?: Parameters<Runtime["define"]>[0];
  maxStoreBytesPerPrincipal?: number;
  keys?: Array<{ id: string; secret: Uint8Array }>;
  /** The tasks' lifetime. Default: the runtime's (1 hour). */
  ttlMs?: number;
}

/** A runtime serving the approval task (or `tools`) on `store`, closed by the caller's `open` list. */
export function signalInstance(store: Store, open: Array<{ close(): Promise<void> }>, options: SignalInstanceOptions = {}) {
  const errors: unknown[] = [];
  const runtime = createRuntime({
    state: { keys: options.keys ?? keys },
    store,
    signals: { baseUrl: SIGNAL_BASE },
    onError: (e) => errors.push(e),
    tasks: { leaseMs: 400, sweepMs: 20, ...(options.ttlMs !== undefined ? { ttlMs: options.ttlMs } : {}) },
    ...(options.maxStoreBytesPerPrincipal !== undefined ? { maxStoreBytesPerPrincipal: options.maxStoreBytesPerPrincipal } : {}),
  });
  runtime.define(options.tools ?? [approval]);
  open.push(runtime);
  return { runtime, errors };
}

export const getTask = async (r: Runtime, taskId: string, info: { principal?: string } = {}) => (await r.getTask({ taskId }, { ...TASKS_INFO, ...info })) as unknown as TaskView;

export const settledTask = (r: Runtime, taskId: string, info: { principal?: string } = {}) =>
  until(async () => {
    const t = await getTask(r, taskId, info);
    return ["completed", "failed", "cancelled"].includes(t.status) ? t : undefined;
  });

/** The task's record as the store keeps it. */
export const recordOf = async (store: Store, taskId: string) => JSON.parse((await store.get(`task:${taskId}`)) ?? "{}") as Record<string, unknown>;

/** Start the approval task on `runtime` and wait until it is parked on its signal: its id, URL and token. */
export async function waitingApproval(runtime: Runtime, store: Store, args: Record<string, unknown> = {}, info: { principal?: string } = {}) {
  const { taskId } = (await runtime.callTool(approval, { name: "approve", arguments: args }, { ...TASKS_INFO, ...info })) as { taskId: string };
  await until(async () => ((await recordOf(store, taskId)).awaits !== undefined && (await getTask(runtime, taskId, info)).statusMessage?.startsWith("Approve at") ? true : undefined));
  await runtime.idle();
  const url = (await getTask(runtime, taskId, info)).statusMessage!.slice("Approve at ".length);
  return { taskId, url, token: url.slice(SIGNAL_BASE.length) };
}

export const refusalOf = (e: unknown) => (e as { data?: { reason?: string } }).data?.reason;

/**
 * Two instances on one store of `make`'s kind: `a` parks the task; `via` is where a signal is
 * delivered — `a` again (its parked generator resumed) or `b` (the task replayed from its journal).
 */
export async function signalPair(
  name: string,
  make: () => Promise<Store>,
  open: Array<{ close(): Promise<void> }>,
  how: "resumed" | "replayed",
  options: SignalInstanceOptions & { otherKeys?: SignalInstanceOptions["keys"] } = {},
) {
  const store = await make();
  const other = name === "memory" ? store : await make();
  // Closed after the runtimes (the list closes newest first).
  open.push(store);
  if (other !== store) open.push(other);
  const a = signalInstance(store, open, options);
  const b = signalInstance(other, open, options.otherKeys !== undefined ? { ...options, keys: options.otherKeys } : options);
  return { store, a, b, via: how === "resumed" ? a : b };
}
