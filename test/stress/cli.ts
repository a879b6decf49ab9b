// `npm run stress`: the full reliability figures the README reports.
import { writeFileSync } from "node:fs";
import os from "node:os";
import { createRuntime } from "mcp-yield";
import { runHostile } from "./hostile.js";
import { runScenario } from "./scenario.js";

const calls = Number(process.env.STRESS_CALLS ?? 1000);
const hostileRuns = Number(process.env.STRESS_HOSTILE ?? 5000);
const log = (l: string) => process.stderr.write(`${l}\n`);

log(`cluster: 3 instances, ${calls} concurrent calls, a crash and a two-phase key rotation...`);
const cluster = await runScenario({ instances: 3, calls, thinkMs: [500, 8000], log });

log(`hostile wire: ${hostileRuns} generated cases...`);
const keys = [{ id: "stress", secret: crypto.getRandomValues(new Uint8Array(32)) }];
const authorErrors: unknown[] = [];
const hostile = await runHostile({ runtime: createRuntime({ state: { keys }, onError: (e) => authorErrors.push(e) }), keys, runs: hostileRuns, seed: Number(process.env.STRESS_SEED ?? 2322) });

const results = {
  machine: { node: process.version, cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? "?"}`, date: new Date().toISOString().slice(0, 10) },
  cluster: { ...cluster, errors: cluster.errors.slice(0, 20), wrong: cluster.wrong.slice(0, 20), errorCount: cluster.errors.length, wrongCount: cluster.wrong.length },
  hostile: { ...hostile, bad: hostile.bad.slice(0, 20), misdelivered: hostile.misdelivered.slice(0, 20), badCount: hostile.bad.length, misdeliveredCount: hostile.misdelivered.length, authorErrors: authorErrors.length },
};
writeFileSync(new URL("../../bench/stress-results.json", import.meta.url), `${JSON.stringify(results, null, 2)}\n`);

const pct = (a: number, b: number) => `${((100 * a) / b).toFixed(1)}%`;
console.log(`Machine: ${results.machine.cpus}, Node ${results.machine.node}, ${results.machine.date}.

Several instances (3 processes, shared MCP_YIELD_KEYS, every round on another instance):

| calls | completed | errors | wrong results | requests | retried after a failed connection | rounds on another instance | seconds |
|---|---|---|---|---|---|---|---|
| ${cluster.calls} | ${cluster.completed} (${pct(cluster.completed, cluster.calls)}) | ${cluster.errors.length} | ${cluster.wrong.length} | ${cluster.requests} | ${cluster.retries} | ${cluster.crossInstanceRounds} (same instance: ${cluster.sameInstanceRounds}) | ${cluster.seconds.toFixed(0)} |

Events: ${cluster.events.join("; ")}.

Hostile wire (generated inputResponses and states against every example tool):

| requests | schema-valid results | JSON-RPC errors with the request id | other responses (5xx, wrong id, invalid, hang) | answers misdelivered | server error-hook reports |
|---|---|---|---|---|---|
| ${hostile.requests} | ${hostile.results} | ${hostile.rpcErrors} | ${hostile.bad.length} | ${hostile.misdelivered.length} | ${authorErrors.length} |

Cases: ${Object.entries(hostile.byCase).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(", ")}.`);
const failed = cluster.errors.length + cluster.wrong.length + hostile.bad.length + hostile.misdelivered.length > 0 || cluster.completed !== cluster.calls;
process.exitCode = failed ? 1 : 0;
