// `npm run bench`: every comparison in one run, as paired CPU-time ratios, each against its
// target. Writes results/bench-results.json and results/replay.svg; `npm run bench -- --readme`
// also writes bench/results.json, bench/replay.svg and bench/README.md's results block.
// `npm run bench -- --quick`: the headline ratios in about two minutes (harness.ts `QUICK`),
// flagged as quick, without the wake-up and pushed-status rows; never written to the README.
import { execFile, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { replayChart } from "./chart.js";
import { compareRuns, comparisonLines } from "./compare-runs.js";
import { httpSection } from "./http-load.js";
import { httpTaskCalls, sdkFloorMsPerRequest } from "./http-tasks.js";
import { updateReadmeBlock } from "./readme-block.js";
import { PINNED_CPU, QUICK, spreads, unstable } from "./harness.js";
import { versusQueues } from "./queue-pairs.js";
import { REALISTIC_SETS, realisticSection } from "./realistic-section.js";
import { statusLine, statusSection, wakeSection } from "./task-status.js";
import { codecSection, decompositionSection, instancesSection, replaySection, storeLabel, storeSection, tokenSection } from "./sections.js";

const run = promisify(execFile);
const here = (f: string) => fileURLToPath(new URL(f, import.meta.url));
// Five fresh runs by default (one in a quick run): each figure is their median, printed with its lowest and highest run.
const runs = Number(process.env.BENCH_RUNS ?? (QUICK ? 1 : 5));
if (QUICK && process.argv.includes("--readme")) throw new Error("bench: --quick figures are not the targets' and are never written to the README: drop --readme or --quick");
const f = (n: number, d = 2) => (Number.isNaN(n) ? "—" : n.toFixed(d));
const log = (l: string) => process.stderr.write(`${l}\n`);

async function redisUp(): Promise<boolean> {
  const { createRedisStore } = await import("mcp-yield/redis");
  try {
    const store = await createRedisStore({ url: process.env.MCP_YIELD_TEST_REDIS_URL ?? "redis://127.0.0.1:6379", timeoutMs: 500 });
    await store.close();
    return true;
  } catch {
    return false;
  }
}

async function postgresUp(): Promise<boolean> {
  const { createPostgresStore } = await import("mcp-yield/postgres");
  try {
    const store = await createPostgresStore({ connectionString: process.env.MCP_YIELD_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test", schema: "mcp_yield_bench", timeoutMs: 2000 });
    await store.close();
    return true;
  } catch {
    return false;
  }
}

/**
 * The commit measured, read before anything is written: `+changes` when tracked files differed
 * from it, so a carried run says whether it measured a commit as it is. Undefined outside git.
 */
function measuredCommit(): string | undefined {
  const head = spawnSync("git", ["rev-parse", "HEAD"], { cwd: here("../../.."), encoding: "utf8" });
  if (head.status !== 0) return undefined;
  const status = spawnSync("git", ["status", "--porcelain", "--untracked-files=no"], { cwd: here("../../.."), encoding: "utf8" });
  return `${head.stdout.trim()}${status.status === 0 && status.stdout.trim() === "" ? "" : "+changes"}`;
}
const commit = measuredCommit();

/**
 * Whether the code measured now (the working tree) is what `carried` measured: no difference in
 * what a bench run executes — src/, bench/ (but its outputs), the package and compiler settings.
 * `undefined` when git cannot tell (no git, or the commit is not in this clone's history).
 */
function sameCodeAs(carried: string): boolean | undefined {
  const paths = ["src", "bench", ":!bench/results.json", ":!bench/replay.svg", ":!bench/README.md", "package.json", "package-lock.json", "tsconfig.json", "tsconfig.build.json"];
  const diff = spawnSync("git", ["diff", "--quiet", carried, "--", ...paths], { cwd: here("../../..") });
  return diff.status === 0 ? true : diff.status === 1 ? false : undefined;
}

/** The run bench/results.json carries (the last `--readme` run), parsed; read before this run may replace it. */
function carriedRun(): unknown {
  try {
    return JSON.parse(readFileSync(here("../../../bench/results.json"), "utf8"));
  } catch (error) {
    return { error: String(error) };
  }
}
const carried = carriedRun();

const started = Date.now();
/** Seconds each section took, in the results: what a full run's time goes to. */
const sectionSeconds: Record<string, number> = {};
async function section<T>(name: string, measure: () => Promise<T>): Promise<T> {
  log(`${name}...`);
  const t = Date.now();
  const value = await measure();
  sectionSeconds[name] = Math.round((Date.now() - t) / 1000);
  return value;
}
if (QUICK) log(`quick run: ${runs} fresh run${runs === 1 ? "" : "s"} per set, fewer rounds, warmed on both CPUs, no re-measuring; no wake-up or pushed-status rows`);
const replay = await section(`replay (${runs} fresh runs per row)`, () => replaySection(runs, QUICK ? [3, 10, 30] : undefined));
const realistic = await section(`realistic tool (${runs} fresh runs per row)`, () => realisticSection(runs, QUICK ? REALISTIC_SETS.filter((x) => x.inFlight === 300) : undefined));
const overFloor = await section("what the runtime adds to the floor, per request and per replayed ask", () => decompositionSection(runs));
const codec = await section("codec", () => codecSection(runs, QUICK ? [10, 100] : undefined));
const token = await section("token size", () => tokenSection());
const heap = await section("heap per held suspended call", async () => {
  const out = (await run(process.execPath, ["--expose-gc", here("./heap.js")], { maxBuffer: 1 << 20 })).stdout.trim();
  return JSON.parse(out) as { calls: number; held: number; kibPerHeld: number | null };
});
const volume = await section("live path at volume", async () => {
  const out = (await run(process.execPath, ["--expose-gc", here("./live-volume.js"), "5000"], { maxBuffer: 1 << 20 })).stdout.trim();
  return JSON.parse(out) as { calls: number; requests: number; resumed: number; replayed: number; share: number; heapMiB: number };
});
const redis = await redisUp();
const postgres = await postgresUp();
const {
  rows: store,
  redis: redisFloor,
  postgres: postgresFloor,
} = await section(`store (memory${redis ? ", Redis" : "; no Redis reachable, its row is skipped"}${postgres ? ", PostgreSQL" : "; no PostgreSQL reachable, its row is skipped"})`, () =>
  storeSection(runs, redis, postgres),
);
const instances = await section("three instances without affinity", () => instancesSection(runs));
const http = await section("http", () => httpSection(QUICK ? { runs, periods: 4 } : {}));
const wakes = QUICK ? [] : await section("wake-ups, per store", () => wakeSection(redis, postgres));
// The task engine against BullMQ and pg-boss (bench/queue-pairs.ts; `npm run bench:tasks` alone prints it with the HTTP rows).
const queues =
  QUICK || !redis || !postgres
    ? []
    : await section("tasks vs BullMQ and pg-boss", () =>
        versusQueues({
          redisUrl: process.env.MCP_YIELD_TEST_REDIS_URL ?? "redis://127.0.0.1:6379",
          postgresUrl: process.env.MCP_YIELD_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test",
          rounds: 3,
          seconds: 5,
          concurrency: 16,
        }),
      );
// One example server on Redis serving task calls over HTTP (`npm run bench:tasks` also with three).
const httpTasks =
  QUICK || !redis
    ? undefined
    : await section("task calls over HTTP, one server process on Redis, and the SDK's floor", async () => ({
        ...(await httpTaskCalls({ redisUrl: process.env.MCP_YIELD_TEST_REDIS_URL ?? "redis://127.0.0.1:6379", processes: 1, seconds: 10, concurrency: 16 })),
        sdkFloorMsPerRequest: await sdkFloorMsPerRequest({ seconds: 5, concurrency: 16 }),
      }));
const status = QUICK ? [] : await section("pushed task status, per store", () => statusSection(redis, postgres));

const at = <T extends { rounds?: number; records?: number }>(rows: T[], key: "rounds" | "records", v: number) => rows.find((r) => r[key] === v)!;
type Target = { name: string; value: number; target: string; met: boolean; range?: [number, number] };
/** The lowest and highest fresh run of a figure, found by the figure's name and a variant with its arguments. */
const rangeOf = (figure: string | undefined, marker: string | undefined): [number, number] | undefined => {
  const found = figure && marker ? spreads.find((x) => x.figure === figure && x.set.includes(marker)) : undefined;
  return found ? [Number(found.min.toFixed(3)), Number(found.max.toFixed(3))] : undefined;
};
const atMost = (name: string, value: number, limit: number, figure?: string, marker?: string): Target => {
  const range = rangeOf(figure, marker);
  return { name, value: Number(value.toFixed(3)), target: `≤ ${limit}`, met: value <= limit, ...(range ? { range } : {}) };
};
const atLeast = (name: string, value: number, limit: number, range?: [number, number]): Target => ({
  name,
  value: Number(value.toFixed(3)),
  target: `≥ ${limit}`,
  met: value >= limit,
  ...(range ? { range: [Number(range[0].toFixed(3)), Number(range[1].toFixed(3))] as [number, number] } : {}),
});
const targets: Target[] = [
  atMost("live path: a/b at R = 3", at(replay, "rounds", 3).liveVsHandWritten, 1.0, "liveB", "a-live(3,"),
  atMost("live path: a/b at R = 30", at(replay, "rounds", 30).liveVsHandWritten, 1.0, "liveB", "a-live(30,"),
  atMost("stateless: a/b at R = 3", at(replay, "rounds", 3).statelessVsHandWritten, 1.3, "statelessB", "a-live(3,"),
  atMost("stateless: a/b at R = 10", at(replay, "rounds", 10).statelessVsHandWritten, 1.45, "statelessB", "a-live(10,"),
  atMost("stateless: a/b at R = 30", at(replay, "rounds", 30).statelessVsHandWritten, 1.6, "statelessB", "a-live(30,"),
  ...realisticTargets(),
  atMost("stateless: a/f at R = 30", at(replay, "rounds", 30).statelessVsFloor, 1.3, "statelessF", "f(30)"),
  atMost("stateless: runtime cost per request over the floor (µs, fit over R)", overFloor.perRequestUs, 4, "perRequestUs", "a30(30,"),
  atMost("stateless: a/b2 at R = 30", at(replay, "rounds", 30).statelessVsHandWrittenAll, 1.1, "statelessB2", "a-live(30,"),
  atMost("3 instances, no affinity, defaults: a/b at R = 10", at(instances, "rounds", 10).liveVsHandWritten, 1.5, "liveB", "a3-live(10,"),
  atMost("3 instances, no affinity, defaults: a/b at R = 30", at(instances, "rounds", 30).liveVsHandWritten, 1.5, "liveB", "a3-live(30,"),
  atMost("3 instances: defaults / liveCalls 0 at R = 10", at(instances, "rounds", 10).liveVsStateless, 1.0, "liveStateless", "a3-live(10,"),
  atMost("3 instances: defaults / liveCalls 0 at R = 30", at(instances, "rounds", 30).liveVsStateless, 1.0, "liveStateless", "a3-live(30,"),
  atMost("memory store at 95 % of its stated sustained rate (steady state) / no store, CPU per round", store.find((x) => x.store === "memory")!.vsNone, 1.5, "memoryRatio", "memory(3,"),
  ...(redisFloor
    ? [
        atMost("Redis store: operations per request (no new step)", redisFloor.operationsPerRequest, 1),
        atMost("Redis store: its CPU per store operation / a bare-socket round trip", redisFloor.vsRawRoundTripPerOperation, 3, "redisVsRawPerOperation", "rawRedis(3"),
      ]
    : []),
  ...(postgresFloor
    ? [
        atMost("postgres round: the store's CPU per operation / a bare parameterised query through pg", postgresFloor.cpuVsRawQueryPerOperation, 1.5, "postgresVsRawPerOperation", "rawPostgres(3"),
        atMost(
          "postgres round: the store's wall time per operation / a bare parameterised query through pg",
          postgresFloor.wallVsRawQueryPerOperation,
          2,
          "postgresWallVsRawPerOperation",
          "rawPostgres(3",
        ),
      ]
    : []),
  ...queues.map((q) =>
    atLeast(`tasks vs ${q.rival}: engine calls / ${q.rival} jobs per second, zero-work, 16 callers, ${q.store} (lowest of ${q.ratios.length} paired rounds)`, Math.min(...q.ratios), 1.0, [
      Math.min(...q.ratios),
      Math.max(...q.ratios),
    ]),
  ),
  atMost("codec, 10 records: signed / HMAC floor", at(codec, "records", 10).signedVsHmacFloor, 1.5, "signedHmac", "hmac(10)"),
  atMost("codec, 10 records: sealed / AES-GCM floor", at(codec, "records", 10).sealedVsGcmFloor, 1.4, "sealedGcm", "hmac(10)"),
  atMost("codec, 100 records: signed / HMAC floor", at(codec, "records", 100).signedVsHmacFloor, 1.2, "signedHmac", "hmac(100)"),
  atMost("codec, 100 records: sealed / AES-GCM floor", at(codec, "records", 100).sealedVsGcmFloor, 1.2, "sealedGcm", "hmac(100)"),
  atMost("token bytes per small answer (sealed)", token.find((t) => t.mode === "sealed")!.bytesPerAnswer, 45),
  // A run where no call was held measured nothing per held call: not met.
  atMost("heap per held suspended call at its third ask (KiB)", heap.kibPerHeld ?? Number.POSITIVE_INFINITY, 8),
  atLeast("HTTP: generator / hand-written calls per second", http.ratio, 1.0, http.range),
  ...(httpTasks ? [atLeast("tasks over HTTP: task calls per second, one example server process on Redis, 16 callers on the same machine", httpTasks.callsPerSecond, 1000)] : []),
  atLeast("live path at volume: share of later rounds resumed, 5,000 calls in flight, default bounds", volume.share, 0.9),
  atMost("live path at volume: heap grown with 5,000 calls in flight (MiB, their states included)", volume.heapMiB, 16),
  ...wakes.map((w) => atMost(`${w.store}: wake-up lateness p99, 1,000 tasks waking within one second, 2 instances (ms)`, w.p99, 250)),
  ...status
    .filter((r) => r.concurrency === 10)
    .flatMap((r) => [
      atMost(`${r.store}: change → frame latency p50, 10 tasks at a time, listener on another instance (ms, from sending the change)`, r.frameP50, 50),
      atMost(`${r.store}: change → frame latency p99, 10 tasks at a time (ms)`, r.frameP99, 250),
      atMost(`${r.store}: tasks/get per task, listening / polling`, r.getsListening / r.getsPolling, 0.1),
    ]),
];

/** The realistic tool's targets (issue 59): stateless with 300 calls in flight, live with 1 and 300. */
function realisticTargets(): Target[] {
  const row = (lines: number, inFlight: number) => realistic.find((r) => r.lines === lines && r.inFlight === inFlight);
  const marker = (lines: number, inFlight: number) => `ra-live(${lines},,${inFlight})`;
  const out: Target[] = [];
  for (const [lines, limit] of [
    [10, 1.45],
    [30, 1.6],
  ] as const) {
    const r = row(lines, 300);
    if (r) out.push(atMost(`realistic: stateless a/b at R = ${lines}, 300 calls in flight`, r.statelessVsHandWritten, limit, "statelessB", marker(lines, 300)));
  }
  for (const inFlight of [1, 300]) {
    const r = row(10, inFlight);
    if (r) out.push(atMost(`realistic: live a/b at R = 10, ${inFlight} call${inFlight === 1 ? "" : "s"} in flight`, r.liveVsHandWritten, 1.0, "liveB", marker(10, inFlight)));
  }
  return out;
}

const machine = {
  pinnedCpu: PINNED_CPU ?? null,
  node: process.version,
  cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? "?"}`,
  platform: `${os.platform()} ${os.arch()}`,
  date: new Date().toISOString().slice(0, 10),
  ...(commit ? { commit } : {}),
};
const comparison = compareRuns(carried, targets, sameCodeAs);
const results = {
  machine,
  quick: QUICK,
  runs,
  seconds: Math.round((Date.now() - started) / 1000),
  sectionSeconds,
  loadAverage: os.loadavg()[0],
  targets,
  comparedWithCarried: comparison,
  unstable,
  replay,
  realistic,
  overFloor,
  codec,
  token,
  heap,
  volume,
  store,
  redisFloor,
  postgresFloor,
  queues,
  instances,
  http,
  httpTasks,
  wakes,
  status,
};

const lines: string[] = [];
if (QUICK)
  lines.push(
    `**Quick run** (\`--quick\`: ${runs} fresh run${runs === 1 ? "" : "s"} of fewer rounds, warmed on both CPUs, no re-measuring, no wake-up or pushed-status rows): a check before a commit, not the targets' figures.`,
    "",
  );
lines.push(
  `Machine: ${machine.cpus}, ${machine.platform}, Node ${machine.node}, ${machine.date}${commit ? `, commit ${commit.slice(0, 7)}${commit.endsWith("+changes") ? " with changes" : ""}` : ""}. CPU time per variant process (${PINNED_CPU === undefined ? "not pinned" : `every variant process on CPU ${PINNED_CPU}`}), paired ratios over alternating batches, medians of ${runs} fresh runs.`,
);
lines.push(
  `Load average when done: ${os.loadavg()[0]!.toFixed(2)}.${unstable.length > 0 ? ` **Unstable** (a variant's cost moved more than 1.5× between fresh runs, twice): ${unstable.join("; ")}.` : " No set of variants moved more than 1.5× between fresh runs."}`,
);
lines.push("", "Targets (median of the fresh runs; min–max of the runs beside it):", "", "| measure | value | min–max | target | met |", "|---|---|---|---|---|");
for (const t of targets) lines.push(`| ${t.name} | ${t.value} | ${t.range ? `${t.range[0]}–${t.range[1]}` : ""} | ${t.target} | ${t.met ? "yes" : "**no**"} |`);
lines.push("", ...comparisonLines(comparison));
lines.push(
  "",
  "Replay — server CPU per whole call of R rounds (µs): (a) the generator resuming (live) or replaying every round (stateless, `liveCalls: 0`), (b) hand-written keeping `{ i, sum }`, (b2) hand-written keeping every answer, (c) the SDK's `inputRequired` + codec, (f) the replay floor — (a)'s code replayed every round with no runtime (not a way to write a tool; a/f is what the runtime adds; (f), f/b and a/f from runs of their own with (a) stateless and (b)):",
  "",
);
lines.push(
  "| R | (a) live | (a) stateless | (b) | (b2) | (c) | (f) | a/b live | a/b stateless | a/b2 stateless | a/c live | f/b | a/f stateless |",
  "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
);
for (const r of replay)
  lines.push(
    `| ${r.rounds} | ${f(r.us.generatorLive, 0)} | ${f(r.us.generatorStateless, 0)} | ${f(r.us.handWritten, 0)} | ${f(r.us.handWrittenAll, 0)} | ${f(r.us.sdk, 0)} | ${f(r.us.replayFloor, 0)} | ${f(r.liveVsHandWritten)} | ${f(r.statelessVsHandWritten)} | ${f(r.statelessVsHandWrittenAll)} | ${f(r.liveVsSdk)} | ${f(r.floorVsHandWritten)} | ${f(r.statelessVsFloor)} |`,
  );
lines.push(
  "",
  "Realistic tool — a 2 KB record read by a step, then R asks under explicit keys with messages built from it and a refined schema, 1 or 300 distinct calls in flight (one request of each in turn); server CPU per request (µs), against the same tool written by hand (same checks, the record and answers in its sealed state):",
  "",
  "| R | in flight | (a) live | (a) stateless | (b) | a/b live | a/b stateless |",
  "|---|---|---|---|---|---|---|",
);
for (const r of realistic)
  lines.push(`| ${r.lines} | ${r.inFlight} | ${f(r.us.live, 1)} | ${f(r.us.stateless, 1)} | ${f(r.us.handWritten, 1)} | ${f(r.liveVsHandWritten)} | ${f(r.statelessVsHandWritten)} |`);
lines.push(
  "",
  `What the runtime adds to the floor, fitted over R = 1, 10, 30 ((a) stateless − (f) ≈ per request × (R + 1) + per replayed ask × R(R + 1)/2, all six alternating in one set, fitted per round of batches): ${f(overFloor.perRequestUs)} µs per request, ${f(overFloor.perReplayedAskUs, 3)} µs per replayed ask (the fit's worst miss, median over rounds: ${f(overFloor.worstResidualUs, 1)} µs per call).`,
);
lines.push("", "Codec — seal + open of a journal of N records (µs) against two floors (JSON + one native HMAC; JSON + one native AES-256-GCM) and the SDK's codec:", "");
lines.push("| records | HMAC floor | GCM floor | signed | sealed | SDK | signed/HMAC | sealed/GCM | sealed/SDK | token bytes (sealed / signed / SDK) |", "|---|---|---|---|---|---|---|---|---|---|");
for (const r of codec)
  lines.push(
    `| ${r.records} | ${f(r.us.hmacFloor, 1)} | ${f(r.us.gcmFloor, 1)} | ${f(r.us.signed, 1)} | ${f(r.us.sealed, 1)} | ${f(r.us.sdk, 1)} | ${f(r.signedVsHmacFloor)} | ${f(r.sealedVsGcmFloor)} | ${f(r.sealedVsSdk)} | ${r.tokenBytes.sealed} / ${r.tokenBytes.signed} / ${r.tokenBytes.sdk} |`,
  );
lines.push(
  "",
  `Token: each small answer (${token[0]!.answerJsonBytes} bytes of JSON) adds ${token.map((t) => `${f(t.bytesPerAnswer, 1)} bytes (${t.mode})`).join(", ")}. Heap per call suspended at its third ask and held (its next round resumes here), through the SDK with 100 SDK tools registered: ${heap.kibPerHeld === null ? "none held" : `${f(heap.kibPerHeld, 1)} KiB`} (${heap.held} of ${heap.calls} calls held).`,
);
lines.push(
  "",
  `Live path at volume: ${volume.calls} calls in flight on one instance, default bounds, served in turn (${volume.requests} requests): ${volume.resumed} of the later rounds resumed, ${volume.replayed} replayed (${f(100 * volume.share, 1)} %); heap grown ${f(volume.heapMiB, 1)} MiB, the calls' states included.`,
);
lines.push(
  "",
  "Store — per round of a 3-ask call (µs), every row on the live path (the runtime's defaults): this process's CPU, and wall time (a Redis or PostgreSQL round trip is mostly waiting):",
  "",
);
lines.push("| store | CPU per round | wall per round | CPU vs no store |", "|---|---|---|---|");
for (const s of store) lines.push(`| ${storeLabel(s.store)} | ${f(s.cpuUsPerRound, 1)} | ${f(s.wallUsPerRound, 1)} | ${f(s.vsNone)} |`);
if (redisFloor)
  lines.push(
    "",
    `Redis: ${f(redisFloor.operationsPerRequest)} store operations per request; the store's own CPU per round (the Redis row less no store) ${f(redisFloor.storeCpuUsPerRound, 1)} µs = ${f(redisFloor.vsRawRoundTrip)}× a bare-socket GET round trip's ${f(redisFloor.rawRoundTripCpuUs, 1)} µs, and per store operation ${f(redisFloor.vsRawRoundTripPerOperation)}×, same run.`,
  );
if (postgresFloor)
  lines.push(
    "",
    `PostgreSQL: ${f(postgresFloor.operationsPerRequest)} store operations per request; per operation the store's CPU is ${f(postgresFloor.cpuVsRawQueryPerOperation)}× and its wall time ${f(postgresFloor.wallVsRawQueryPerOperation)}× a bare parameterised \`SELECT $1::text\` through pg (${f(postgresFloor.rawQueryCpuUs, 1)} µs CPU, ${f(postgresFloor.rawQueryWallUs, 1)} µs wall), same run.`,
  );
for (const q of queues)
  lines.push(
    "",
    `Tasks vs ${q.rival} (${q.store}), zero-work, 16 callers, ${q.ratios.length} paired rounds: engine ${q.pairs.map((p) => p.engine.perSecond.toFixed(0)).join(", ")} calls/s, ${q.rival} ${q.pairs.map((p) => p.rival.perSecond.toFixed(0)).join(", ")} jobs/s, ratio ${q.ratios.map((r) => r.toFixed(2)).join(", ")}.`,
  );
lines.push(
  "",
  "Three instances without affinity (round-robin), server CPU per whole call (µs):",
  "",
  "| R | defaults | liveCalls 0 | (b) | a/b defaults | a/b liveCalls 0 | defaults / liveCalls 0 |",
  "|---|---|---|---|---|---|---|",
);
for (const r of instances)
  lines.push(`| ${r.rounds} | ${f(r.us.live, 0)} | ${f(r.us.stateless, 0)} | ${f(r.us.handWritten, 0)} | ${f(r.liveVsHandWritten)} | ${f(r.statelessVsHandWritten)} | ${f(r.liveVsStateless)} |`);
lines.push(
  "",
  `HTTP — completed ${http.rounds}-ask calls per second, ${http.concurrency} concurrent clients, one SDK server at a time (${http.runs} fresh servers, ${http.periods} alternating periods each, the ratio paired per pair of periods): generator ${f(http.generatorCallsPerSec, 0)}, hand-written ${f(http.handWrittenCallsPerSec, 0)}, ratio ${f(http.ratio)} (${f(http.range[0])}–${f(http.range[1])}).`,
);
if (httpTasks)
  lines.push(
    "",
    `Task calls over HTTP — one example server on Redis, ${httpTasks.concurrency} callers in the bench process, ${httpTasks.seconds} s, a zero-work task created and listened for until it completes: ${f(httpTasks.callsPerSecond, 0)} calls/s; CPU per call: the server ${httpTasks.serverCpuMsPerCall === undefined ? "—" : `${f(httpTasks.serverCpuMsPerCall)} ms`}, the callers ${f(httpTasks.clientCpuMsPerCall)} ms (they share the machine's cores). The SDK alone (a fresh McpServer per request, one plain tool) spends ${httpTasks.sdkFloorMsPerRequest === undefined ? "—" : `${f(httpTasks.sdkFloorMsPerRequest)} ms`} of CPU per \`tools/call\` request; a task call is two requests (the call, its listen), so one process serves at most ${httpTasks.sdkFloorMsPerRequest === undefined ? "—" : f(1000 / (2 * httpTasks.sdkFloorMsPerRequest), 0)} task calls/s however little the engine costs.`,
  );
if (!QUICK) lines.push("", "Wake-ups and pushed task status (bench/task-status.ts; `npm run bench:wakeups` and `npm run bench:status` alone):", "");
for (const w of wakes) lines.push(`- ${w.store}: 1,000 tasks waking within one second, 2 instances: lateness p50 ${w.p50} ms, p99 ${w.p99} ms.`);
for (const r of status) lines.push(`- ${statusLine(r)}.`);
const markdown = lines.join("\n");
console.log(markdown);

mkdirSync(here("../../../results"), { recursive: true });
writeFileSync(here("../../../results/bench-results.json"), `${JSON.stringify(results, null, 2)}\n`);
const svg = `${replayChart(replay, "Server CPU per call (median of paired alternating batches)")}\n`;
writeFileSync(here("../../../results/replay.svg"), svg);
if (process.argv.includes("--readme")) {
  writeFileSync(here("../../../bench/results.json"), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(here("../../../bench/replay.svg"), svg);
  updateReadmeBlock("bench", markdown, here("../../../bench/README.md"));
}
log(
  `done in ${results.seconds}s (${Object.entries(sectionSeconds)
    .map(([name, seconds]) => `${name.split(" (")[0]} ${seconds}s`)
    .join(
      ", ",
    )}): results/bench-results.json, results/replay.svg${process.argv.includes("--readme") ? "; bench/results.json, bench/replay.svg and bench/README.md updated" : " (tracked files untouched: add --readme to update them)"}`,
);
log(`targets met: ${targets.filter((t) => t.met).length}/${targets.length}`);
for (const line of comparisonLines(comparison)) log(line);
