import { formatJournal } from "../journal/inspect.js";
import { createTaskAdmin, type TaskDetail, type TaskSummary } from "../tasks/admin.js";
import { TASK_STATUSES, type TaskStatus } from "../wire/index.js";
import { parseCommand } from "./args.js";
import { openStore, STORE_OPTIONS } from "./store.js";

export const tasksUsage = `  mcp-yield tasks list [--status S[,S…]] [--tool NAME] [--limit N] [--principals] [--json]
                                     the tasks in the servers' store, oldest first: id, status, tool, age, principal
                                     (a digest unless --principals), what each is doing now
  mcp-yield tasks show <task id> [--principals] [--json]
                                     one task: its record, its journal record by record (as inspect reads a token),
                                     what it waits for, its outcome
  mcp-yield tasks cancel <task id> [--json]
                                     cancel as tasks/cancel does: at once, or by its run at its next heartbeat
  mcp-yield tasks retry <task id> [--json]
                                     go on with a task held for an operator ("needs attention"): from its failed
                                     step (completed steps are not run again), or replayed by the code deployed since
  mcp-yield tasks fail <task id> [--reason TEXT] [--json]
                                     end a held task: failed, with the reason as its message
    store: --redis URL | --redis-cluster URL,URL... [--redis-prefix P] | --postgres URL [--postgres-schema S]
           (or MCP_YIELD_REDIS_URL, MCP_YIELD_REDIS_CLUSTER, MCP_YIELD_REDIS_PREFIX, MCP_YIELD_POSTGRES_URL,
           MCP_YIELD_POSTGRES_SCHEMA)`;

const age = (ms: number) => {
  const s = Math.floor(ms / 1000);
  return s >= 86_400 ? `${Math.floor(s / 86_400)}d` : s >= 3600 ? `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m` : s >= 60 ? `${Math.floor(s / 60)}m${s % 60}s` : `${s}s`;
};

function table(rows: TaskSummary[]): string[] {
  if (rows.length === 0) return ["no tasks"];
  const cells = [["TASK", "STATUS", "TOOL", "AGE", "PRINCIPAL", "NOW"], ...rows.map((r) => [r.taskId, r.status, r.tool, age(r.ageMs), r.principal ?? "-", r.state])];
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((c) => c[i]!.length)));
  return cells.map((c) => c.map((cell, i) => (i === c.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  "));
}

function detail(t: TaskDetail): string[] {
  const lines = [
    `task ${t.taskId}: ${t.status}${t.state !== t.status ? ` — ${t.state}` : ""}`,
    `  tool      ${t.tool}${t.version !== undefined ? ` (version ${JSON.stringify(t.version)})` : ""}`,
    `  created   ${t.createdAt} (${age(t.ageMs)} ago)`,
    `  updated   ${t.lastUpdatedAt}`,
    `  expires   ${t.expiresAt}`,
    `  principal ${t.principal ?? "none"}`,
    `  call      ${t.callId}`,
  ];
  if (t.statusMessage !== undefined) lines.push(`  message   ${t.statusMessage}`);
  lines.push(...formatJournal(t.journal, t.waitingFor));
  const cut = (v: unknown) => {
    const text = JSON.stringify(v);
    return text.length > 400 ? `${text.slice(0, 400)}…` : text;
  };
  if (t.result !== undefined) lines.push(`  result    ${cut(t.result)}`);
  if (t.error !== undefined) lines.push(`  error     ${cut(t.error)}`);
  return lines;
}

function statuses(text: string | undefined): TaskStatus[] | undefined {
  if (text === undefined) return undefined;
  const list = text.split(",").map((s) => s.trim());
  for (const s of list) if (!(TASK_STATUSES as readonly string[]).includes(s)) throw new TypeError(`unknown status ${JSON.stringify(s)}: one of ${TASK_STATUSES.join(", ")}`);
  return list as TaskStatus[];
}

/** `mcp-yield tasks <list|show|cancel|retry|fail> …`; returns the exit code. */
export async function tasksCommand(args: readonly string[], env: Record<string, string | undefined>, out: (line: string) => void): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseCommand(rest, {
    ...STORE_OPTIONS,
    json: { type: "boolean" },
    principals: { type: "boolean" },
    status: { type: "string" },
    tool: { type: "string" },
    limit: { type: "string" },
    reason: { type: "string" },
  });
  if (sub !== "list" && sub !== "show" && sub !== "cancel" && sub !== "retry" && sub !== "fail") throw new TypeError(`tasks takes list, show, cancel, retry or fail, got ${JSON.stringify(sub ?? "")}`);
  if (values.reason !== undefined && sub !== "fail") throw new TypeError("--reason goes with tasks fail");
  if (sub === "list" ? positionals.length > 0 : positionals.length !== 1)
    throw new TypeError(sub === "list" ? "tasks list takes no task id (filter with --status and --tool)" : `tasks ${sub} takes one task id`);
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1)) throw new TypeError(`--limit must be a positive integer, got ${JSON.stringify(values.limit)}`);
  const wanted = statuses(values.status);
  const store = await openStore(values, env);
  try {
    const admin = createTaskAdmin({ store });
    const print = (value: unknown, lines: () => string[]) =>
      values.json
        ? out(JSON.stringify(value, null, 2))
        : lines().forEach((l) => {
            out(l);
          });
    if (sub === "list") {
      const rows = await admin.list({
        ...(wanted ? { status: wanted } : {}),
        ...(values.tool !== undefined ? { tool: values.tool } : {}),
        ...(limit !== undefined ? { limit } : {}),
        principals: values.principals === true,
      });
      print(rows, () => table(rows));
      return 0;
    }
    const id = positionals[0]!;
    if (sub === "show") {
      const t = await admin.show(id, { principals: values.principals === true });
      if (t === undefined) throw new Error(`no task ${JSON.stringify(id)} in this store (never made, or expired)`);
      print(t, () => detail(t));
      return 0;
    }
    const status = sub === "cancel" ? await admin.cancel(id) : sub === "retry" ? await admin.retry(id) : await admin.fail(id, values.reason);
    if (status === undefined) throw new Error(`no task ${JSON.stringify(id)} in this store (never made, or expired)`);
    const after = (await admin.show(id))!;
    print({ taskId: id, status: after.status, state: after.state }, () => [`task ${id}: ${after.status === "working" ? after.state : after.status}`]);
    return 0;
  } finally {
    await store.close();
  }
}
