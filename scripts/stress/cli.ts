// `npm run stress`: the full reliability figures docs/operations.md reports. Writes
// results/stress-results.json; `npm run stress -- --readme` also rewrites the block in docs/operations.md.
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { createRuntime } from "mcp-yield";
import { updateReadmeBlock } from "../../bench/readme-block.js";
import { dropPrefix, REDIS_URL, redisAvailable } from "../../test/support/redis.js";
import { runHostile } from "./hostile.js";
import { runScenario } from "./scenario.js";
import { runTaskScenario } from "./task-scenario.js";

const calls = Number(process.env.STRESS_CALLS ?? 1000);
const taskCalls = Number(process.env.STRESS_TASK_CALLS ?? 300);
const hostileRuns = Number(process.env.STRESS_HOSTILE ?? 5000);
const log = (l: string) => process.stderr.write(`${l}\n`);
if (!redisAvailable) throw new Error(`npm run stress needs Redis at ${REDIS_URL} for the task scenario (MCP_YIELD_TEST_REDIS_URL to point elsewhere)`);

log(`cluster: 3 instances, ${calls} concurrent calls, a crash and a two-phase key rotation...`);
const cluster = await runScenario({ instances: 3, calls, thinkMs: [500, 8000], log });

log(`tasks: 3 instances on Redis, ${taskCalls} task calls, one instance killed mid-run...`);
const prefix = `mcp-yield-stress:${Date.now().toString(36)}:`;
const tasks = await runTaskScenario({ instances: 3, calls: taskCalls, thinkMs: [100, 2000], storeEnv: { MCP_YIELD_REDIS_URL: REDIS_URL, MCP_YIELD_REDIS_PREFIX: prefix }, log }).finally(() =>
  dropPrefix(prefix),
);

log(`hostile wire: ${hostileRuns} generated cases...`);
const keys = [{ id: "stress", secret: crypto.getRandomValues(new Uint8Array(32)) }];
const authorErrors: unknown[] = [];
const hostile = await runHostile({ runtime: createRuntime({ state: { keys }, onError: (e) => authorErrors.push(e) }), keys, runs: hostileRuns, seed: Number(process.env.STRESS_SEED ?? 2322) });

const results = {
  machine: { node: process.version, cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? "?"}`, date: new Date().toISOString().slice(0, 10) },
  cluster: { ...cluster, errors: cluster.errors.slice(0, 20), wrong: cluster.wrong.slice(0, 20), errorCount: cluster.errors.length, wrongCount: cluster.wrong.length },
  tasks: {
    ...tasks,
    errors: tasks.errors.slice(0, 20),
    wrong: tasks.wrong.slice(0, 20),
    inconsistent: tasks.inconsistent.slice(0, 20),
    errorCount: tasks.errors.length,
    wrongCount: tasks.wrong.length,
    inconsistentCount: tasks.inconsistent.length,
  },
  hostile: {
    ...hostile,
    bad: hostile.bad.slice(0, 20),
    misdelivered: hostile.misdelivered.slice(0, 20),
    badCount: hostile.bad.length,
    misdeliveredCount: hostile.misdelivered.length,
    authorErrors: authorErrors.length,
  },
};
mkdirSync(new URL("../../results/", import.meta.url), { recursive: true });
writeFileSync(new URL("../../results/stress-results.json", import.meta.url), `${JSON.stringify(results, null, 2)}\n`);

const pct = (a: number, b: number) => `${((100 * a) / b).toFixed(1)}%`;
const markdown = `Machine: ${results.machine.cpus}, Node ${results.machine.node}, ${results.machine.date}.

Several instances (3 processes, shared MCP_YIELD_KEYS, every round on another instance):

| calls | completed | errors | wrong results | requests | retried after a failed connection | rounds on another instance | seconds |
|---|---|---|---|---|---|---|---|
| ${cluster.calls} | ${cluster.completed} (${pct(cluster.completed, cluster.calls)}) | ${cluster.errors.length} | ${cluster.wrong.length} | ${cluster.requests} | ${cluster.retries} | ${cluster.crossInstanceRounds} (same instance: ${cluster.sameInstanceRounds}) | ${cluster.seconds.toFixed(0)} |

Events: ${cluster.events.join("; ")}.

Tasks (3 processes sharing one Redis; every tools/call, tasks/get and tasks/update to a random instance; lease ${tasks.leaseMs / 1000} s):

| task calls | completed | errors | wrong results | stuck | reported differently by another instance | requests | retried after a failed connection | slowest call (s) | seconds |
|---|---|---|---|---|---|---|---|---|---|
| ${tasks.calls} | ${tasks.completed} (${pct(tasks.completed, tasks.calls)}) | ${tasks.errors.length} | ${tasks.wrong.length} | ${tasks.stuck} | ${tasks.inconsistent.length} | ${tasks.requests} | ${tasks.retries} | ${tasks.slowestSeconds.toFixed(1)} | ${tasks.seconds.toFixed(0)} |

Events: ${tasks.events.join("; ")}.

Hostile wire (generated inputResponses and states against every example tool):

| requests | schema-valid results | JSON-RPC errors with the request id | other responses (5xx, wrong id, invalid, hang) | answers misdelivered | server error-hook reports |
|---|---|---|---|---|---|
| ${hostile.requests} | ${hostile.results} | ${hostile.rpcErrors} | ${hostile.bad.length} | ${hostile.misdelivered.length} | ${authorErrors.length} |

Cases: ${Object.entries(hostile.byCase)
  .sort((a, b) => b[1] - a[1])
  .map(([k, v]) => `${k} ${v}`)
  .join(", ")}.`;
console.log(markdown);
if (process.argv.includes("--readme")) updateReadmeBlock("stress", markdown, fileURLToPath(new URL("../../docs/operations.md", import.meta.url)));
log(`results/stress-results.json written${process.argv.includes("--readme") ? "; docs/operations.md updated" : " (docs/operations.md untouched: add --readme to update it)"}`);
const failed =
  cluster.errors.length + cluster.wrong.length + tasks.errors.length + tasks.wrong.length + tasks.stuck + tasks.inconsistent.length + hostile.bad.length + hostile.misdelivered.length > 0 ||
  cluster.completed !== cluster.calls ||
  tasks.completed !== tasks.calls;
process.exitCode = failed ? 1 : 0;
