// `npm run bench:tasks`: first the task engine alone against the job queues users would pick
// for durable work on the same store — zero-work tasks against BullMQ's jobs on Redis and
// pg-boss's on PostgreSQL, submitted and awaited by CONCURRENCY callers in this process, the
// engine and its rival alternated in BENCH_TASK_ROUNDS rounds (each on a fresh prefix or schema,
// the one going first swapped each round) and compared per round (the ratio's min–max is the
// figure). Then task calls per second through the example server on Redis (bench/http-tasks.ts)
// — from one server process, then from three sharing the store (no affinity: each request of a
// call, its listen included, goes to the next process in turn). The clients, the servers and
// the stores share this machine's cores.
import os from "node:os";
import { httpTaskCalls, sdkFloorMsPerRequest } from "./http-tasks.js";
import { versusQueues } from "./queue-pairs.js";

const REDIS = process.env.MCP_YIELD_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const POSTGRES = process.env.MCP_YIELD_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const SECONDS = Number(process.env.BENCH_TASK_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_TASK_ROUNDS ?? 3);
const PAIR_SECONDS = Number(process.env.BENCH_TASK_PAIR_SECONDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_TASK_CONCURRENCY ?? 16);
const range = (values: number[], digits: number) => `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`;
const versus = (await versusQueues({ redisUrl: REDIS, postgresUrl: POSTGRES, rounds: ROUNDS, seconds: PAIR_SECONDS, concurrency: CONCURRENCY })).map(
  (v) =>
    `| ${v.store} | ${range(
      v.pairs.map((p) => p.engine.perSecond),
      0,
    )} | ${v.rival} ${range(
      v.pairs.map((p) => p.rival.perSecond),
      0,
    )} | **${range(v.ratios, 2)}×** | ${range(
      v.pairs.map((p) => p.engine.cpuMicrosPerCall),
      0,
    )} / ${range(
      v.pairs.map((p) => p.rival.cpuMicrosPerCall),
      0,
    )} |`,
);
console.log(
  [
    `The task engine alone against the job queue on the same store: ${CONCURRENCY} callers in one process, ${PAIR_SECONDS} s per side, ${ROUNDS} rounds (min–max); a zero-work task or job submitted and awaited.`,
    "",
    "| store | engine calls/s | rival jobs/s | engine ÷ rival | CPU µs per call, engine / rival |",
    "|---|---|---|---|---|",
    ...versus,
    "",
  ].join("\n"),
);

const rows: string[] = [];
for (const processes of [1, 3]) {
  const r = await httpTaskCalls({ redisUrl: REDIS, processes, seconds: SECONDS, concurrency: CONCURRENCY });
  const server = r.serverCpuMsPerCall === undefined ? "—" : r.serverCpuMsPerCall.toFixed(2);
  rows.push(`| ${processes} | ${r.callsPerSecond.toFixed(0)} | ${r.calls} | ${r.clientCpuMsPerCall.toFixed(2)} | ${server} |`);
}
console.log(
  [
    `Node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? "?"}, load average ${os.loadavg()[0]!.toFixed(2)} when done; ${CONCURRENCY} concurrent callers for ${SECONDS} s, slow_compute { seconds: 0 } as a task, each listened for until it completes; every request to the next process in turn.`,
    "",
    "| server processes on Redis | task calls per second | calls completed | client CPU per call (ms) | servers' CPU per call (ms) |",
    "|---|---|---|---|---|",
    ...rows,
  ].join("\n"),
);
const floor = await sdkFloorMsPerRequest({ seconds: SECONDS / 2, concurrency: CONCURRENCY });
if (floor !== undefined)
  console.log(
    `\nThe SDK alone (a fresh McpServer per request, one plain tool): ${floor.toFixed(2)} ms of server CPU per tools/call request. A task call is two requests (the call, its listen): one process serves at most ${(1000 / (2 * floor)).toFixed(0)} task calls/s however little the engine costs.`,
  );
