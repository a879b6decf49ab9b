import { formatJournal } from "../journal/inspect.js";
import { createTaskAdmin, type TaskDetail, type TaskSummary } from "../tasks/admin/admin.js";
import type { TaskFilter } from "../tasks/admin/filter.js";
import { TASK_STATUSES, type TaskStatus } from "../wire/index.js";
import { parseCommand } from "./args.js";
import { openStore, STORE_OPTIONS } from "./store.js";

export const tasksUsage = `  mcp-yield tasks list [FILTERS] [--limit N] [--after CURSOR] [--principals] [--json]
                                     the tasks in the servers' store, oldest first: id, status, tool, age, principal
                                     (a digest unless --principals), what each is doing now; a page of --limit
                                     (default 100), and the --after that reads the next (--json: {tasks, next})
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
  mcp-yield tasks cancel|retry|fail FILTERS [--dry-run] [--reason TEXT] [--json]
                                     the same for every task the filters select (at least one), with a count;
                                     --dry-run lists them and changes nothing
  mcp-yield tasks reindex [--json]   put every task into the indexes filtered lists read: once, after upgrading
                                     every instance from a version without them (0.1.0)
    filters (list too): --status S[,S…] --tool NAME --principal P (as it is, or its digest)
           --since ISO-TIME|30m|2h|7d (created since) --needs-attention (held for an operator)
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

/** `--since`: an ISO time, or how long ago (`90s`, `30m`, `2h`, `7d`). */
function sinceOf(text: string, now = Date.now()): Date {
  const ago = /^(\d+)(s|m|h|d)$/.exec(text.trim());
  if (ago) return new Date(now - Number(ago[1]) * { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[ago[2] as "s" | "m" | "h" | "d"]);
  const at = new Date(text);
  if (Number.isNaN(at.getTime()) || !/^\d{4}-\d\d-\d\d/.test(text.trim()))
    throw new TypeError(`--since takes an ISO time (2026-12-05T10:00:00Z) or how long ago (30m, 2h, 7d), got ${JSON.stringify(text)}`);
  return at;
}

/** `mcp-yield tasks <list|show|cancel|retry|fail|reindex> …`; returns the exit code. */
export async function tasksCommand(args: readonly string[], env: Record<string, string | undefined>, out: (line: string) => void): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseCommand(rest, {
    ...STORE_OPTIONS,
    json: { type: "boolean" },
    principals: { type: "boolean" },
    status: { type: "string" },
    tool: { type: "string" },
    limit: { type: "string" },
    after: { type: "string" },
    reason: { type: "string" },
    principal: { type: "string" },
    since: { type: "string" },
    "needs-attention": { type: "boolean" },
    "dry-run": { type: "boolean" },
  });
  if (sub !== "list" && sub !== "show" && sub !== "cancel" && sub !== "retry" && sub !== "fail" && sub !== "reindex")
    throw new TypeError(`tasks takes list, show, cancel, retry, fail or reindex, got ${JSON.stringify(sub ?? "")}`);
  if (values.after !== undefined && sub !== "list") throw new TypeError("--after goes with tasks list");
  if (values.reason !== undefined && sub !== "fail") throw new TypeError("--reason goes with tasks fail");
  const filter: TaskFilter = {
    ...(values.status !== undefined ? { status: statuses(values.status)! } : {}),
    ...(values.tool !== undefined ? { tool: values.tool } : {}),
    ...(values.principal !== undefined ? { principal: values.principal } : {}),
    ...(values.since !== undefined ? { since: sinceOf(values.since) } : {}),
    ...(values["needs-attention"] === true ? { needsAttention: true } : {}),
  };
  const filtered = Object.keys(filter).length > 0;
  const bulk = (sub === "cancel" || sub === "retry" || sub === "fail") && positionals.length === 0;
  if (sub === "show" && positionals.length !== 1) throw new TypeError("tasks show takes one task id");
  if (sub === "reindex" && (positionals.length > 0 || filtered)) throw new TypeError("tasks reindex takes no task id and no filter: it indexes every task");
  if (sub === "list" && positionals.length > 0) throw new TypeError("tasks list takes no task id (filter with --status, --tool, --principal, --since, --needs-attention)");
  if (sub !== "list" && sub !== "show" && (positionals.length > 1 || (positionals.length === 1 && filtered)))
    throw new TypeError(`tasks ${sub} takes one task id, or filters (--status, --tool, --principal, --since, --needs-attention) and no id`);
  if (bulk && !filtered) throw new TypeError(`tasks ${sub} takes a task id, or at least one filter (--status, --tool, --principal, --since, --needs-attention)`);
  if (values["dry-run"] === true && !bulk) throw new TypeError("--dry-run goes with tasks cancel, retry or fail by filter");
  if (sub === "show" && filtered) throw new TypeError("tasks show takes a task id, not filters");
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1)) throw new TypeError(`--limit must be a positive integer, got ${JSON.stringify(values.limit)}`);
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
      const page = await admin.listPage({
        ...filter,
        ...(limit !== undefined ? { limit } : {}),
        ...(values.after !== undefined ? { after: values.after } : {}),
        principals: values.principals === true,
      });
      print(page, () => [...table(page.tasks), ...(page.next !== undefined ? [`next page: --after ${page.next}`] : [])]);
      return 0;
    }
    if (sub === "reindex") {
      const indexed = await admin.reindex();
      print({ indexed }, () => [`indexed ${indexed} task${indexed === 1 ? "" : "s"}`]);
      return 0;
    }
    if (bulk) {
      const done = await admin.bulk(sub as "cancel" | "retry" | "fail", filter, { dryRun: values["dry-run"] === true, ...(values.reason !== undefined ? { reason: values.reason } : {}) });
      const verb = { cancel: "cancelled", retry: "retried", fail: "failed" }[done.action];
      print(done, () =>
        done.dryRun
          ? [`would ${done.action} ${done.matched} task${done.matched === 1 ? "" : "s"}${done.matched > 0 ? ":" : ""}`, ...done.taskIds.map((id) => `  ${id}`)]
          : [
              `${verb} ${done.changed} of ${done.matched} task${done.matched === 1 ? "" : "s"} matched${done.skipped.length > 0 ? `; ${done.skipped.length} skipped:` : ""}`,
              ...done.skipped.map((s) => `  ${s.taskId}: ${s.why}`),
            ],
      );
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
