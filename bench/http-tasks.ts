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
const sdkFloorServer = fileURLToPath(new URL("./sdk-floor-server.js", import.meta.url));

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
  // Tasks live 500 ms (not an hour; a zero-work task ends within milliseconds): every call here
  // is one anonymous caller, whose share is 1000 tasks alive at once — 2,000 calls/s at most.
  const env = { PORT: "0", MCP_YIELD_KEYS: keys, MCP_YIELD_REDIS_URL: redisUrl, MCP_YIELD_REDIS_PREFIX: prefix, MCP_YIELD_TASK_POLL_MS: String(POLL_MS), MCP_YIELD_TASK_TTL_MS: "500" };
  return listening(server, env);
}

/** `script` started with `env`; resolves with the URL it prints once it listens. */
function listening(script: string, env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [script], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += String(d);
      const url = out.match(/listening on (http:\S+\/mcp)/)?.[1];
      if (url) resolve({ url, child });
    });
    child.once("exit", (code) => reject(new Error(`${script} exited (${code}) before it listened: ${out}`)));
  });
}

// Each measure is preceded by the same load, unmeasured, for this long: until then the servers'
// code is still being optimised, and a cold second read as much as twice the CPU per request.
const WARM_UP_SECONDS = 2;

/** `call` made by `concurrency` callers, each calling again as soon as one ends, for `seconds`; how many ended. */
async function load(call: () => Promise<unknown>, concurrency: number, seconds: number): Promise<number> {
  const until = Date.now() + seconds * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < until) {
        await call();
        done++;
      }
    }),
  );
  return done;
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

/** Completed task calls per second over `seconds`, after the same load warmed the servers. */
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
    await load(call, concurrency, WARM_UP_SECONDS);
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
    const calls = await load(call, concurrency, seconds);
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

/**
 * The SDK's own floor: its server CPU per request (ms) serving a plain `tools/call` (bench/
 * sdk-floor-server.ts), `concurrency` callers for `seconds`. A task call over HTTP is two
 * requests (the call and its listen), so one process serves at most 1,000 / (2 × this) task
 * calls per second however little the task engine costs. Undefined where there is no /proc.
 */
export async function sdkFloorMsPerRequest(options: { seconds: number; concurrency: number }): Promise<number | undefined> {
  const { url, child } = await listening(sdkFloorServer, {});
  try {
    const send = createFetchSender(url, { capabilities: {} });
    const call = () => send("tools/call", { name: "plain", arguments: { seconds: 0 } });
    await load(call, options.concurrency, WARM_UP_SECONDS);
    const before = cpuSecondsOf(child);
    const requests = await load(call, options.concurrency, options.seconds);
    const after = cpuSecondsOf(child);
    return before === undefined || after === undefined ? undefined : ((after - before) * 1e3) / requests;
  } finally {
    child.kill("SIGTERM");
  }
}
