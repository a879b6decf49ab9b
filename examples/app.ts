import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { toNodeHandler } from "@modelcontextprotocol/node";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { createMemoryStore, createRuntime, createSignalHandler, formatRoundTrace, parseKeyRing, type RoundTrace, type Runtime, type StateKey, type Store, type TaskOptions } from "mcp-yield";
import { createPostgresStore } from "mcp-yield/postgres";
import { createRedisStore } from "mcp-yield/redis";
import { register, withTaskStatus } from "mcp-yield/server";
import { refuseOversized } from "./oversized.js";
import { bookFlight } from "./tools/book-flight.js";
import { chargeOnce } from "./tools/charge-once.js";
import { conformanceFixtures } from "./tools/conformance.js";
import { durableFixtures } from "./tools/durable.js";
import { generateReport } from "./tools/generate-report.js";
import { planTrip } from "./tools/plan-trip.js";
import { taskFixtures } from "./tools/task-fixtures.js";
import { workspaceSummary } from "./tools/workspace-summary.js";

export const exampleDefinitions = [bookFlight, planTrip, workspaceSummary, generateReport, chargeOnce, ...conformanceFixtures, ...taskFixtures, ...durableFixtures];

/**
 * PostgreSQL when `MCP_YIELD_POSTGRES_URL` is set (schema `MCP_YIELD_POSTGRES_SCHEMA`, default
 * public), Redis when `MCP_YIELD_REDIS_URL` is (prefix `MCP_YIELD_REDIS_PREFIX`): several
 * instances then share tasks and redeemed states. Memory otherwise (one instance).
 */
export async function storeFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<{ store: Store; kind: string; label: string }> {
  const given = (name: string) => (env[name]?.trim() ? env[name]!.trim() : undefined);
  const postgres = given("MCP_YIELD_POSTGRES_URL");
  const redis = given("MCP_YIELD_REDIS_URL");
  const cluster = given("MCP_YIELD_REDIS_CLUSTER");
  if ([postgres, redis, cluster].filter((v) => v !== undefined).length > 1)
    throw new TypeError("set one of MCP_YIELD_POSTGRES_URL, MCP_YIELD_REDIS_URL and MCP_YIELD_REDIS_CLUSTER: instances must share one store");
  if (postgres !== undefined) {
    const schema = given("MCP_YIELD_POSTGRES_SCHEMA");
    return { store: await createPostgresStore({ connectionString: postgres, ...(schema !== undefined ? { schema } : {}) }), kind: "postgres", label: "PostgreSQL" };
  }
  if (cluster !== undefined) {
    const clusterUrls = cluster
      .split(",")
      .map((u) => u.trim())
      .filter((u) => u !== "");
    return { store: await createRedisStore({ clusterUrls, prefix: env.MCP_YIELD_REDIS_PREFIX ?? "mcp-yield:" }), kind: "redis", label: "Redis Cluster" };
  }
  if (redis !== undefined) return { store: await createRedisStore({ url: redis, prefix: env.MCP_YIELD_REDIS_PREFIX ?? "mcp-yield:" }), kind: "redis", label: "Redis" };
  return { store: createMemoryStore(), kind: "memory", label: "memory" };
}

/** The key ring from `MCP_YIELD_KEYS`, or one ephemeral key (with `ephemeral: true`). */
export function keysFromEnv(env: NodeJS.ProcessEnv = process.env): { keys: StateKey[]; ephemeral: boolean } {
  const text = env.MCP_YIELD_KEYS;
  if (text !== undefined && text.trim() !== "") return { keys: parseKeyRing(text), ephemeral: false };
  return { keys: [{ id: "ephemeral", secret: crypto.getRandomValues(new Uint8Array(32)) }], ephemeral: true };
}

/** Task timing from the environment (MCP_YIELD_TASK_LEASE_MS, MCP_YIELD_TASK_TTL_MS, MCP_YIELD_TASK_POLL_MS); the defaults otherwise. */
export function taskOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): TaskOptions {
  const ms = (name: string): number | undefined => {
    const text = env[name];
    if (text === undefined || text.trim() === "") return undefined;
    const value = Number(text);
    if (!Number.isSafeInteger(value) || value <= 0) throw new TypeError(`${name} must be a positive integer of milliseconds, got ${JSON.stringify(text)}`);
    return value;
  };
  const leaseMs = ms("MCP_YIELD_TASK_LEASE_MS");
  const ttlMs = ms("MCP_YIELD_TASK_TTL_MS");
  const pollIntervalMs = ms("MCP_YIELD_TASK_POLL_MS");
  return { ...(leaseMs !== undefined ? { leaseMs } : {}), ...(ttlMs !== undefined ? { ttlMs } : {}), ...(pollIntervalMs !== undefined ? { pollIntervalMs } : {}) };
}

/** Request bodies over this get HTTP 413 before anything is parsed. */
export const MAX_REQUEST_BODY_BYTES = 1024 * 1024;

/**
 * A fresh McpServer per request (stateless serving), all sharing one runtime; task status is
 * pushed to clients that listen for it (`subscriptions/listen` naming task ids), from whichever
 * instance changed the task.
 */
export function createApp(runtime: Runtime) {
  const handler = createMcpHandler(
    () => {
      const server = new McpServer({ name: "mcp-yield-example", version: "0.1.0" });
      register(server, exampleDefinitions, { runtime });
      return server;
    },
    { maxRequestBodySize: MAX_REQUEST_BODY_BYTES },
  );
  return withTaskStatus(handler, runtime, { maxRequestBodySize: MAX_REQUEST_BODY_BYTES });
}

export interface RunningServer {
  url: string;
  server: Server;
  runtime: Runtime;
  store: Store;
  close(): Promise<void>;
}

/**
 * Listen on 127.0.0.1:`port` (0 picks a free port) and serve `/mcp`, and `/signals/<token>` for
 * task signals (webhooks). Signal URLs are `MCP_YIELD_SIGNAL_BASE_URL` + token when set (the
 * public address several instances share, e.g. a load balancer's), else this instance's own.
 */
export async function startExampleServer(
  options: { port?: number; keys?: StateKey[]; store?: Store; onError?: (e: unknown) => void; onRound?: (trace: RoundTrace) => void } = {},
): Promise<RunningServer> {
  const store = options.store ?? (await storeFromEnv()).store;
  // Routes are bound once the runtime exists (it needs the address the server got).
  let route: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const server = createServer((req, res) => (route ? route(req, res) : res.writeHead(503).end()));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  }).catch(async (error: unknown) => {
    if (options.store === undefined) await store.close();
    throw error;
  });
  const { port } = server.address() as AddressInfo;
  const runtime = createRuntime({
    state: { keys: options.keys ?? keysFromEnv().keys },
    store,
    tasks: taskOptionsFromEnv(),
    signals: { baseUrl: process.env.MCP_YIELD_SIGNAL_BASE_URL || `http://127.0.0.1:${port}/signals/` },
    // MCP_YIELD_TRACE=1: one line per round on stderr (path, records replayed, steps, asks, state size, time).
    ...(options.onRound ? { onRound: options.onRound } : process.env.MCP_YIELD_TRACE === "1" ? { onRound: (t: RoundTrace) => console.error(formatRoundTrace(t)) } : {}),
    onError: options.onError ?? ((error, info) => console.error(`[mcp-yield] ${info.method} ${info.target} round ${info.round}${info.taskId ? ` task ${info.taskId}` : ""}:`, error)),
  });
  const app = createApp(runtime);
  // The casts: the SDK types Node's request loosely, which exactOptionalPropertyTypes refuses.
  const mcp = toNodeHandler(app, { maxRequestBodySize: MAX_REQUEST_BODY_BYTES }) as RequestListener;
  const signals = toNodeHandler({ fetch: createSignalHandler(runtime) }) as RequestListener;
  route = (req, res) => {
    const path = (req.url ?? "").split("?")[0]!;
    if (path === "/mcp") return void (refuseOversized(req, res, MAX_REQUEST_BODY_BYTES) || mcp(req, res));
    if (path.startsWith("/signals/")) return void signals(req, res);
    res.writeHead(404, { "content-type": "text/plain" }).end("Not found: the MCP endpoint is /mcp (task signals: /signals/<token>)\n");
  };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    server,
    runtime,
    store,
    close: async () => {
      await app.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await runtime.close();
      if (options.store === undefined) await store.close();
    },
  };
}
