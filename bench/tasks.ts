// `npm run bench:tasks`: task calls per second through the example server on Redis — from one
// server process, then from three sharing the store (no affinity: each request of a call, the
// tasks/get polls included, goes to the next process in turn). Reported, not a target: the
// clients, the servers and Redis share this machine's cores.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { callWithInput, createFetchSender, type Send } from "mcp-yield/client";

const REDIS = process.env.MCP_YIELD_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const SECONDS = Number(process.env.BENCH_TASK_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_TASK_CONCURRENCY ?? 16);
const POLL_MS = 10;
const server = fileURLToPath(new URL("../examples/server.js", import.meta.url));
const keys = `bench:${randomBytes(32).toString("base64")}`;

/** An example server on Redis, on a free port; resolves with its URL once it listens. */
function start(prefix: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [server], {
    // Tasks kept 2 s after they start (not an hour): every call here is one anonymous caller, whose
    // share is 1000 tasks kept at once.
    env: { ...process.env, PORT: "0", MCP_YIELD_KEYS: keys, MCP_YIELD_REDIS_URL: REDIS, MCP_YIELD_REDIS_PREFIX: prefix, MCP_YIELD_TASK_POLL_MS: String(POLL_MS), MCP_YIELD_TASK_TTL_MS: "2000" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += String(d);
      const url = out.match(/listening on (http:\S+\/mcp)/)?.[1];
      if (url) resolve({ url, child });
    });
    child.once("exit", (code) => reject(new Error(`the example server exited (${code}) before it listened: ${out}`)));
  });
}

/** Completed task calls per second over SECONDS, CONCURRENCY callers, requests spread over `urls` in turn. */
async function measure(urls: string[]): Promise<{ callsPerSecond: number; calls: number; cpuSecondsClient: number }> {
  const senders = urls.map((url) => createFetchSender(url, { capabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } }));
  let next = 0;
  const send: Send = Object.assign((method: string, params: Record<string, unknown>) => senders[next++ % senders.length]!(method, params), { capabilities: senders[0]!.capabilities });
  const call = async () => {
    const result = await callWithInput<{ content: Array<{ text?: string }> }>(send, "tools/call", { name: "slow_compute", arguments: { seconds: 0 } }, {}, { minPollIntervalMs: POLL_MS });
    if (result.content[0]?.text !== "Computed in 0s") throw new Error(`unexpected result ${JSON.stringify(result)}`);
  };
  for (let i = 0; i < CONCURRENCY; i++) await call(); // warm up every path once
  const cpu = process.cpuUsage();
  const until = Date.now() + SECONDS * 1000;
  let calls = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < until) {
        await call();
        calls++;
      }
    }),
  );
  const used = process.cpuUsage(cpu);
  return { callsPerSecond: calls / SECONDS, calls, cpuSecondsClient: (used.user + used.system) / 1e6 };
}

const rows: string[] = [];
for (const processes of [1, 3]) {
  const prefix = `mcp-yield-bench-tasks:${process.pid}:${processes}:`;
  const servers = await Promise.all(Array.from({ length: processes }, () => start(prefix)));
  try {
    const r = await measure(servers.map((s) => s.url));
    rows.push(`| ${processes} | ${r.callsPerSecond.toFixed(0)} | ${r.calls} | ${r.cpuSecondsClient.toFixed(1)} |`);
  } finally {
    for (const s of servers) s.child.kill("SIGTERM");
  }
}
console.log(
  [
    `Node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? "?"}, load average ${os.loadavg()[0]!.toFixed(2)} when done; ${CONCURRENCY} concurrent callers for ${SECONDS} s, slow_compute { seconds: 0 } as a task, the server suggesting ${POLL_MS} ms polls; every request to the next process in turn.`,
    "",
    "| server processes on Redis | task calls per second | calls completed | client CPU (s) |",
    "|---|---|---|---|",
    ...rows,
  ].join("\n"),
);
