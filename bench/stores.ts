// `npm run bench:stores`: only the store rows of the bench (memory, Redis, PostgreSQL per round),
// for choosing a store; `npm run bench` measures them with everything else. `--readme` writes the
// table into docs/operations.md's "Choosing a store".
import os from "node:os";
import { fileURLToPath } from "node:url";
import { updateReadmeBlock } from "./readme-block.js";
import { PINNED_CPU } from "./harness.js";
import { storeLabel, storeSection } from "./sections.js";

const runs = Number(process.env.BENCH_RUNS ?? 5);
const { rows, redis } = await storeSection(runs, true, true);
const f = (n: number) => n.toFixed(1);
const load = os.loadavg()[0]!.toFixed(2);
const lines = [
  `Node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? "?"}, load average ${load} when done, ${new Date().toISOString().slice(0, 10)}; medians of ${runs} fresh runs, alternating batches${PINNED_CPU === undefined ? "" : `, every variant process on CPU ${PINNED_CPU}`}.`,
  "",
  "| store | CPU per round (µs) | wall per round (µs) | CPU vs no store |",
  "|---|---|---|---|",
  ...rows.map((r) => `| ${storeLabel(r.store)} | ${f(r.cpuUsPerRound)} | ${f(r.wallUsPerRound)} | ${r.vsNone.toFixed(2)}× |`),
  ...(redis
    ? [
        "",
        `Redis: ${redis.operationsPerRequest.toFixed(2)} store operations per request (a round without a step: one); the store's CPU per round, ${f(redis.storeCpuUsPerRound)} µs, is ${redis.vsRawRoundTrip.toFixed(2)}× a bare-socket round trip's ${f(redis.rawRoundTripCpuUs)} µs measured in the same run (${redis.vsRawRoundTripPerOperation.toFixed(2)}× per store operation).`,
      ]
    : []),
];
console.log(lines.join("\n"));
// Compiled into bench/.build/bench/: the repository root is three folders up.
if (process.argv.includes("--readme")) updateReadmeBlock("stores", lines.join("\n"), fileURLToPath(new URL("../../../docs/operations.md", import.meta.url)));
