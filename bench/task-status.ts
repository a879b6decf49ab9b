// Pushed task status (issue 58, points 4 and 5), per store: two example-server processes sharing
// the store — the runner, where calls and answers go, and the listener, where the client listens
// and polls (two instances behind a load balancer) — and a client in this process following
// BENCH_STATUS_TASKS tasks (default 150; the example server keeps at most 1,000 per caller) of `confirm_delete`, each parked on its question until
// the client answers it with `tasks/update`, 1, 10, then 100 at a time:
// - change → frame latency: from sending that answer to the runner to the arrival of the task's
//   next frame from the listener (the answer's write, its notice through the store, the
//   listener's read and frame: an upper bound, measured on the client's clock alone — it holds
//   the answer's own round trip); and from the answer's response (a lower bound);
// - polls per task: `tasks/get` requests per completed task while listening, against the same
//   client told not to listen (today's client, polling at the server's interval).
// `npm run bench:status` runs it alone; `npm run bench` takes its rows.
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { callWithInput, createFetchSender } from "mcp-yield/client";
import { createPostgresStore } from "mcp-yield/postgres";
import { createRedisStore } from "mcp-yield/redis";
import { dropPostgresSchema, dropRedisPrefix } from "./cleanup.js";
import { spreadLateness } from "./wakeups.js";

const POSTGRES_URL = process.env.MCP_YIELD_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const REDIS_URL = process.env.MCP_YIELD_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const TASKS = Number(process.env.BENCH_STATUS_TASKS ?? 150);
const KEYS = `status:${Buffer.from(new Uint8Array(32).fill(58)).toString("base64")}`;
const caps = { extensions: { "io.modelcontextprotocol/tasks": {} }, elicitation: {} };
const serverScript = fileURLToPath(new URL("../examples/server.js", import.meta.url));

export interface StatusFigures {
  store: string;
  tasks: number;
  concurrency: number;
  /** From sending the answer (an upper bound of change → frame). */
  frameP50: number;
  frameP99: number;
  /** From the answer's response (a lower bound: the write came before it). */
  ackedP50: number;
  ackedP99: number;
  /** tasks/get per completed task: listening, and polling (listen: false). */
  getsListening: number;
  getsPolling: number;
}

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))]!;

const handlers = { elicit: () => ({ action: "accept" as const, content: { confirm: true } }) };

/** Follow `count` tasks through the two instances, `concurrency` at a time; change → frame latencies and `tasks/get` count. */
async function follow(runnerUrl: string, listenerUrl: string, count: number, concurrency: number, listen: boolean): Promise<{ latencies: number[]; sinceAck: number[]; gets: number }> {
  let gets = 0;
  // Per task answered: when the answer was sent, and when the runner's response to it came back.
  const answered = new Map<string, { sent: number; acked?: number }>();
  const route = async (_input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const method = new Headers(init?.headers).get("mcp-method");
    if (method === "tasks/get") gets++;
    if (method !== "tasks/update") return fetch(method === "tools/call" ? runnerUrl : listenerUrl, init);
    const answer = { sent: performance.now() } as { sent: number; acked?: number };
    answered.set((JSON.parse(String(init?.body)) as { params: { taskId: string } }).params.taskId, answer);
    const response = await fetch(runnerUrl, init);
    const body = await response.arrayBuffer();
    answer.acked = performance.now();
    return new Response(body, { status: response.status, headers: response.headers });
  };
  const send = createFetchSender("http://balancer/mcp", { capabilities: caps, fetch: route as typeof fetch });
  const latencies: number[] = [];
  const sinceAck: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next++ < count) {
      await callWithInput(send, "tools/call", { name: "confirm_delete", arguments: { filename: `f${next}` } }, handlers, {
        listen,
        onTask: (task) => {
          const answer = answered.get(task.taskId);
          if (answer === undefined) return;
          const now = performance.now();
          latencies.push(now - answer.sent);
          // Arrived before the answer's response: the write was even closer (0 as the lower bound).
          sinceAck.push(Math.max(0, now - (answer.acked ?? now)));
          answered.delete(task.taskId);
        },
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return { latencies, sinceAck, gets };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** An example server process on `env`'s store; resolves once it listens. */
async function exampleServer(env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [serverScript], { env: { ...process.env, ...env, PORT: String(port), MCP_YIELD_KEYS: KEYS }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stderr!.on("data", (d: Buffer) => (output += String(d)));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => ((output += String(d)), /listening on/.test(output) && resolve()));
    child.once("exit", (code) => reject(new Error(`the example server exited (${code}): ${output}`)));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, child };
}

const stopped = (child: ChildProcess) => new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : (child.once("exit", () => resolve()), child.kill("SIGTERM"))));

/** The figures of one store at each concurrency: `env` points an example server at it. */
export async function measureStatus(name: string, env: Record<string, string>, count = TASKS): Promise<StatusFigures[]> {
  const [runner, listener] = await Promise.all([exampleServer(env), exampleServer(env)]);
  try {
    await follow(runner.url, listener.url, 20, 10, true); // warm-up: connections, compiled code
    const rows: StatusFigures[] = [];
    for (const concurrency of [1, 10, 100]) {
      const listening = await follow(runner.url, listener.url, count, concurrency, true);
      const polling = await follow(runner.url, listener.url, count, concurrency, false);
      rows.push({
        store: name,
        tasks: count,
        concurrency,
        frameP50: Number(quantile(listening.latencies, 0.5).toFixed(1)),
        frameP99: Number(quantile(listening.latencies, 0.99).toFixed(1)),
        ackedP50: Number(quantile(listening.sinceAck, 0.5).toFixed(1)),
        ackedP99: Number(quantile(listening.sinceAck, 0.99).toFixed(1)),
        getsListening: listening.gets / count,
        getsPolling: polling.gets / count,
      });
    }
    return rows;
  } finally {
    await Promise.all([stopped(runner.child), stopped(listener.child)]);
  }
}

/** Every store this machine reaches, in a namespace of this run's own. */
export async function statusSection(redis: boolean, postgres: boolean): Promise<StatusFigures[]> {
  const rows: StatusFigures[] = [];
  if (redis) {
    const prefix = `bench-status-${process.pid}:`;
    try {
      rows.push(...(await measureStatus("Redis", { MCP_YIELD_REDIS_URL: REDIS_URL, MCP_YIELD_REDIS_PREFIX: prefix })));
    } finally {
      await dropRedisPrefix(REDIS_URL, prefix);
    }
  }
  if (postgres) {
    const schema = `bench_status_${process.pid}`;
    try {
      rows.push(...(await measureStatus("PostgreSQL", { MCP_YIELD_POSTGRES_URL: POSTGRES_URL, MCP_YIELD_POSTGRES_SCHEMA: schema })));
    } finally {
      await dropPostgresSchema(POSTGRES_URL, schema);
    }
  }
  return rows;
}

/** Wake-up lateness per store: 1,000 tasks asleep until moments within one second, two instances (bench/wakeups.ts). */
export async function wakeSection(redis: boolean, postgres: boolean): Promise<Array<{ store: string; p50: number; p99: number }>> {
  const rows: Array<{ store: string; p50: number; p99: number }> = [];
  if (redis) {
    const prefix = `bench-wake-${process.pid}:`;
    try {
      rows.push({ store: "Redis", ...(await spreadLateness(() => createRedisStore({ url: REDIS_URL, prefix, onWarning: () => {} }))) });
    } finally {
      await dropRedisPrefix(REDIS_URL, prefix);
    }
  }
  if (postgres) {
    const schema = `bench_wake_${process.pid}`;
    try {
      rows.push({ store: "PostgreSQL", ...(await spreadLateness(() => createPostgresStore({ connectionString: POSTGRES_URL, schema }))) });
    } finally {
      await dropPostgresSchema(POSTGRES_URL, schema);
    }
  }
  return rows;
}

export const statusLine = (r: StatusFigures) =>
  `${r.store}: ${r.tasks} tasks, ${r.concurrency} at a time, runner and listener two processes: change → frame latency p50 ${r.frameP50} ms, p99 ${r.frameP99} ms (targets ≤ 50 / ≤ 250; from the answer's response: ${r.ackedP50} / ${r.ackedP99} ms); tasks/get per task ${r.getsListening.toFixed(2)} listening, ${r.getsPolling.toFixed(2)} polling (${(100 * (1 - r.getsListening / r.getsPolling)).toFixed(0)} % fewer; target ≥ 90 %)`;

if (process.argv[1]?.endsWith("task-status.js")) {
  for (const row of await statusSection(true, true)) console.log(statusLine(row));
}
