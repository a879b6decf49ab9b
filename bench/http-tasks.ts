// Task calls per second through the example server on Redis: `processes` example servers
// sharing one prefix, `concurrency` callers in this process, each request of a call to the next
// server in turn (no affinity). slow_compute { seconds: 0 } as a task: the call creates it, the
// client listens for its status (`subscriptions/listen`) until it completes. The clients, the
// servers and Redis share this machine's cores, so the servers' own CPU per call is given too:
// a process with a core to itself serves at most 1,000 / (its ms per call) calls per second.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { callWithInput, createFetchSender, type Send } from "mcp-yield/client";

const POLL_MS = 10;
const server = fileURLToPath(new URL("../examples/server.js", import.meta.url));

export interface HttpTaskCalls {
  processes: number;
  concurrency: number;
  seconds: number;
  callsPerSecond: number;
  calls: number;
  /** This process's CPU (the callers) per completed call. */
  clientCpuMsPerCall: number;
  /** The servers' CPU per completed call, from /proc (undefined where there is none). */
  serverCpuMsPerCall: number | undefined;
}

/** An example server on Redis, on a free port; resolves with its URL once it listens. */
function start(redisUrl: string, prefix: string, keys: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [server], {
    // Tasks live 500 ms (not an hour; a zero-work task ends within milliseconds): every call here
    // is one anonymous caller, whose share is 1000 tasks alive at once — 2,000 calls/s at most.
    env: { ...process.env, PORT: "0", MCP_YIELD_KEYS: keys, MCP_YIELD_REDIS_URL: redisUrl, MCP_YIELD_REDIS_PREFIX: prefix, MCP_YIELD_TASK_POLL_MS: String(POLL_MS), MCP_YIELD_TASK_TTL_MS: "500" },
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

/** CPU seconds a child has used (user + system), from /proc; undefined where there is no /proc. */
function cpuSecondsOf(child: ChildProcess): number | undefined {
  try {
    const fields = readFileSync(`/proc/${child.pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/** Completed task calls per second over `seconds`, after every path was taken once per caller. */
export async function httpTaskCalls(options: { redisUrl: string; processes: number; seconds: number; concurrency: number }): Promise<HttpTaskCalls> {
  const { processes, seconds, concurrency } = options;
  const prefix = `mcp-yield-bench-tasks:${process.pid}:${processes}:${randomBytes(4).toString("hex")}:`;
  const keys = `bench:${randomBytes(32).toString("base64")}`;
  const servers = await Promise.all(Array.from({ length: processes }, () => start(options.redisUrl, prefix, keys)));
  try {
    const senders = servers.map((s) => createFetchSender(s.url, { capabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } }));
    let next = 0;
    const send: Send = Object.assign((method: string, params: Record<string, unknown>) => senders[next++ % senders.length]!(method, params), { capabilities: senders[0]!.capabilities });
    const call = async () => {
      const result = await callWithInput<{ content: Array<{ text?: string }> }>(send, "tools/call", { name: "slow_compute", arguments: { seconds: 0 } }, {}, { minPollIntervalMs: POLL_MS });
      if (result.content[0]?.text !== "Computed in 0s") throw new Error(`unexpected result ${JSON.stringify(result)}`);
    };
    for (let i = 0; i < concurrency; i++) await call(); // warm up every path once
    const serverCpu = () => {
      let sum = 0;
      for (const s of servers) {
        const seconds = cpuSecondsOf(s.child);
        if (seconds === undefined) return undefined;
        sum += seconds;
      }
      return sum;
    };
    const serverBefore = serverCpu();
    const cpu = process.cpuUsage();
    const until = Date.now() + seconds * 1000;
    let calls = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (Date.now() < until) {
          await call();
          calls++;
        }
      }),
    );
    const used = process.cpuUsage(cpu);
    const serverAfter = serverCpu();
    return {
      processes,
      concurrency,
      seconds,
      callsPerSecond: calls / seconds,
      calls,
      clientCpuMsPerCall: (used.user + used.system) / 1e3 / calls,
      serverCpuMsPerCall: serverBefore === undefined || serverAfter === undefined ? undefined : ((serverAfter - serverBefore) * 1e3) / calls,
    };
  } finally {
    for (const s of servers) s.child.kill("SIGTERM");
  }
}
