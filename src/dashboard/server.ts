import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { type AddressInfo, isIP } from "node:net";
import { terminalSafe } from "../util/terminal.js";
import { redactText } from "../store/bounded.js";
import type { Store } from "../store/index.js";
import { TASK_STATUSES, type TaskStatus } from "../wire/index.js";
import { createTaskAdmin, type TaskListOptions } from "../tasks/admin/admin.js";
import { DASHBOARD_CSS, DASHBOARD_HTML, DASHBOARD_SCRIPT } from "./assets.js";
import { timelineOf } from "./timeline.js";

// `npx mcp-yield dashboard`: a local web page over the store the servers share — the task list
// with filters and live status, a task's journal as a timeline, and (only when started with
// --allow-actions) cancel, retry and fail. It has no login: it listens on 127.0.0.1 unless told
// otherwise, answers only requests addressed to the host it listens on (a page elsewhere cannot
// reach it through DNS rebinding), and takes an action only with the token its own page carries
// (a page elsewhere cannot read it). Every string a client wrote is sent as display text:
// controls and bidirectional overrides escaped (as the CLI prints them), and the page puts text
// into the document as text, never as markup.

/** What `startDashboard` takes. */
export interface DashboardOptions {
  store: Store;
  /** Address to listen on. Default `127.0.0.1`. */
  host?: string;
  /** Port; 0 (default 4180 in the CLI) picks a free one. */
  port: number;
  /** Offer cancel, retry and fail. Default false: the page only reads. */
  allowActions?: boolean;
}

/** A running dashboard: its address, and `close`. */
export interface Dashboard {
  url: string;
  close(): Promise<void>;
}

const MAX_BODY = 4096;

/** Every string in `value` as display text (controls and bidirectional marks escaped, passwords out). */
function displayed(value: unknown): unknown {
  if (typeof value === "string") return terminalSafe(value);
  if (Array.isArray(value)) return value.map(displayed);
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [terminalSafe(k), displayed(v)]));
  return value;
}

/** A list's filters from the query string; a TypeError names a bad one. */
function listOptionsOf(query: URLSearchParams): TaskListOptions {
  const options: TaskListOptions = {};
  const status = query.get("status");
  if (status) {
    const list = status.split(",");
    for (const s of list) if (!(TASK_STATUSES as readonly string[]).includes(s)) throw new TypeError(`unknown status ${JSON.stringify(s)}`);
    options.status = list as TaskStatus[];
  }
  const text = (name: string) => {
    const v = query.get(name)?.trim();
    return v === undefined || v === "" ? undefined : v;
  };
  const tool = text("tool");
  if (tool !== undefined) options.tool = tool;
  const principal = text("principal");
  if (principal !== undefined) options.principal = principal;
  const since = text("since");
  if (since !== undefined) {
    const at = new Date(since);
    if (Number.isNaN(at.getTime())) throw new TypeError(`since must be an ISO time, got ${JSON.stringify(since)}`);
    options.since = at;
  }
  if (query.get("needsAttention") === "1") options.needsAttention = true;
  const after = text("after");
  if (after !== undefined) options.after = after;
  const limit = text("limit");
  if (limit !== undefined) {
    const n = Number(limit);
    if (!Number.isSafeInteger(n) || n < 1 || n > 1000) throw new TypeError(`limit must be an integer from 1 to 1000, got ${JSON.stringify(limit)}`);
    options.limit = n;
  }
  return options;
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  let body = "";
  for await (const chunk of req) {
    body += String(chunk);
    if (body.length > MAX_BODY) throw new TypeError("the request body is too large");
  }
  return body;
}

/** Serve the dashboard over `store` until `close`. */
export async function startDashboard(options: DashboardOptions): Promise<Dashboard> {
  const { store, allowActions = false } = options;
  const host = options.host ?? "127.0.0.1";
  const admin = createTaskAdmin({ store });
  // The page's action token: only a page this dashboard served can act.
  const token = randomBytes(24).toString("base64url");
  let hosts = new Set<string>();
  let port = 0;
  // Listening on every address: reached by any of this machine's addresses, written as an IP (a name could be anybody's).
  const wildcard = host === "0.0.0.0" || host === "::";
  const addressedHere = (h: string) => hosts.has(h) || (wildcard && isIP(h.replace(/:\d+$/, "").replace(/^\[(.*)\]$/, "$1")) !== 0 && h.endsWith(`:${port}`));

  const send = (res: ServerResponse, status: number, type: string, body: string) => {
    res.writeHead(status, {
      "content-type": type,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
      "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    });
    res.end(body);
  };
  const json = (res: ServerResponse, status: number, value: unknown) => send(res, status, "application/json; charset=utf-8", JSON.stringify(displayed(value)));

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // DNS rebinding: a name that resolves here is still not this dashboard's host.
    if (!addressedHere((req.headers.host ?? "").toLowerCase())) return json(res, 421, { error: "this dashboard answers only requests addressed to its own host" });
    const url = new URL(req.url ?? "/", "http://dashboard");
    const path = url.pathname;
    if (req.method === "GET" && (path === "/" || path.startsWith("/task/")))
      return send(res, 200, "text/html; charset=utf-8", DASHBOARD_HTML.replace("%TOKEN%", allowActions ? token : "").replace("%ACTIONS%", allowActions ? "1" : "0"));
    if (req.method === "GET" && path === "/app.js") return send(res, 200, "text/javascript; charset=utf-8", DASHBOARD_SCRIPT);
    if (req.method === "GET" && path === "/app.css") return send(res, 200, "text/css; charset=utf-8", DASHBOARD_CSS);
    if (req.method === "GET" && path === "/api/tasks") return json(res, 200, await admin.listPage(listOptionsOf(url.searchParams)));
    const one = /^\/api\/tasks\/([^/]+)(?:\/(cancel|retry|fail))?$/.exec(path);
    if (one === null) return json(res, 404, { error: `no such page: ${path}` });
    const id = decodeURIComponent(one[1]!);
    if (req.method === "GET" && one[2] === undefined) {
      const task = await admin.show(id);
      return task === undefined ? json(res, 404, { error: `no task ${id} in this store (never made, or expired)` }) : json(res, 200, { ...task, timeline: timelineOf(task) });
    }
    if (req.method !== "POST" || one[2] === undefined) return json(res, 405, { error: `${req.method} is not allowed here` });
    if (!allowActions) return json(res, 403, { error: "this dashboard only reads: start it with --allow-actions to cancel, retry or fail tasks" });
    if (req.headers["x-dashboard-token"] !== token) return json(res, 403, { error: "an action needs the token of this dashboard's own page" });
    const body = (await bodyOf(req)).trim();
    const reason = body === "" ? undefined : (JSON.parse(body) as { reason?: unknown }).reason;
    if (reason !== undefined && typeof reason !== "string") throw new TypeError("reason must be text");
    const action = one[2];
    const status = action === "cancel" ? await admin.cancel(id) : action === "retry" ? await admin.retry(id) : await admin.fail(id, reason === "" ? undefined : reason);
    if (status === undefined) return json(res, 404, { error: `no task ${id} in this store (never made, or expired)` });
    return json(res, 200, { taskId: id, status });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      // A bad filter or a task that is not held: the operator's mistake, said as it is. The store
      // unreachable: said too, without its password.
      const message = redactText(error instanceof Error ? error.message : String(error));
      const status = error instanceof TypeError || error instanceof SyntaxError || /not held/.test(message) ? 400 : 503;
      if (!res.headersSent) json(res, status, { error: message });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, host, () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  const shown = host.includes(":") ? `[${host}]` : host;
  hosts = new Set([`${shown}:${port}`.toLowerCase(), ...(host === "127.0.0.1" || host === "::1" || host === "localhost" ? [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`] : [])]);
  return {
    url: `http://${shown}:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
