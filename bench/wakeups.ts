// `npm run bench:wakeups`: wake-ups at their time, at volume (issue 58 point 2). Two instances
// (two runtimes in this process, each on a connection of its own; the periodic sweep 60 s away,
// so only the wake timers, the change feed and the due index wake anything), on Redis and
// PostgreSQL:
// - spread: BENCH_WAKE_SPREAD tasks (default 1,000) started on one instance, each asleep until
//   a moment within the same second; lateness = when its next step ran − the time it slept until
//   (store clock), p50 / p99 / max. Target p99 ≤ 250 ms.
// - mass: BENCH_WAKE_MASS tasks (default 20,000) asleep until one moment; how long until the
//   last one's next step ran, and the rate. Target: all within 20 s (≥ 1,000 per second). And
//   what the store holds per sleeping task (its bytes before and after the starts).
// Tasks are started in batches of 100 before the moment (the starts' time is printed, not a
// target). Wall clock,
// one process: the instances share its CPU as two processes on one core would.
import { createRuntime, type Runtime, sleep, step, type Store, tool } from "mcp-yield";
import { createPostgresStore } from "mcp-yield/postgres";
import { createRedisStore } from "mcp-yield/redis";
import { z } from "zod";
import { dropPostgresSchema, dropRedisPrefix } from "./cleanup.js";
import { postgresBytes, redisBytes } from "./store-bytes.js";

const POSTGRES_URL = process.env.MCP_YIELD_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const REDIS_URL = process.env.MCP_YIELD_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const SPREAD = Number(process.env.BENCH_WAKE_SPREAD ?? 1_000);
const MASS = Number(process.env.BENCH_WAKE_MASS ?? 20_000);
const secret = new Uint8Array(32).fill(11);
const info = { clientCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } };

/** Each woken task: how late its next step ran, in ms (local epoch clock; same machine as the store). */
const woke: number[] = [];
const sleeper = tool({
  name: "sleeper",
  description: "",
  input: z.object({ until: z.number() }),
  task: "required",
  async *run({ until }) {
    yield* sleep(new Date(until));
    yield* step("woke", () => {
      woke.push(Date.now() - until);
      return 1;
    });
    return "ok";
  },
});

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))]!;

/** Two instances, each with a store of its own; `close()` closes them and their stores (a store left open keeps the process alive). */
async function instances(make: () => Promise<Store>): Promise<Runtime[]> {
  const made: Runtime[] = [];
  for (let i = 0; i < 2; i++) {
    const store = await make();
    const runtime = createRuntime({ state: { keys: [{ id: "w", secret }] }, store, onError: () => {}, tasks: { sweepMs: 60_000, ttlMs: 3_600_000, maxPerPrincipal: 1_000_000 } });
    runtime.define([sleeper]);
    const close = runtime.close.bind(runtime);
    made.push(Object.assign(runtime, { close: async () => (await close(), await store.close()) }));
  }
  return made;
}

let started = 0;
/** Start a sleeper per time, 100 at a time; a start the store refused (busy) is tried again. */
async function start(runtime: Runtime, untils: number[]): Promise<void> {
  const one = async (until: number): Promise<unknown> => {
    for (let attempt = 0; ; attempt++) {
      try {
        // Spread over 100 callers: a share of 20,000 tasks held by one caller is not what this measures.
        return await runtime.callTool(sleeper, { name: "sleeper", arguments: { until } }, { ...info, principal: `caller-${started++ % 100}` });
      } catch (error) {
        if (attempt >= 5) throw error;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  for (let i = 0; i < untils.length; i += 100) await Promise.all(untils.slice(i, i + 100).map(one));
}

async function waitFor(count: number, limitMs: number): Promise<boolean> {
  const end = Date.now() + limitMs;
  while (woke.length < count && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  return woke.length >= count;
}

/** Wake-up lateness of `count` tasks asleep until moments within one second, on two instances (`make` opens a connection per instance). */
export async function spreadLateness(make: () => Promise<Store>, count = SPREAD): Promise<{ p50: number; p99: number; max: number; woke: number; startedLate: boolean }> {
  const [a, b] = await instances(make);
  try {
    woke.length = 0;
    const spreadAt = Date.now() + 2_000 + count * 3;
    await start(
      a!,
      Array.from({ length: count }, (_, i) => spreadAt + Math.floor((i * 1000) / count)),
    );
    const startedLate = Date.now() > spreadAt;
    await waitFor(count, 60_000);
    return { p50: quantile(woke, 0.5), p99: quantile(woke, 0.99), max: Math.max(...woke), woke: woke.length, startedLate };
  } finally {
    await a!.close();
    await b!.close();
  }
}

async function bench(name: string, make: () => Promise<Store>, bytes: () => Promise<number>): Promise<void> {
  // Spread: 1,000 within one second, starting once they are all started.
  const spread = await spreadLateness(make);
  if (spread.startedLate) console.log(`${name}: starting took past the wake time: lateness includes it`);
  console.log(
    `${name}: ${SPREAD} tasks waking within one second, 2 instances: lateness p50 ${spread.p50} ms, p99 ${spread.p99} ms, max ${spread.max} ms${spread.woke >= SPREAD ? "" : ` (only ${spread.woke} woke within 60 s)`} — target p99 ≤ 250 ms`,
  );

  // Mass: all due at one moment.
  const [a, b] = await instances(make);
  woke.length = 0;
  const massAt = Date.now() + 5_000 + MASS / 2;
  const bytesBefore = await bytes();
  const startedAt = Date.now();
  await start(
    a!,
    Array.from({ length: MASS }, () => massAt),
  );
  const startMs = Date.now() - startedAt;
  // Starts that end past the moment: the first tasks woke while later ones were still starting,
  // and the last one's lateness counts the rest of the starting — not a measure of waking.
  const startedLate = Date.now() > massAt;
  const perTask = ((await bytes()) - bytesBefore) / MASS;
  console.log(`${name}: started ${MASS} sleeping tasks in ${(startMs / 1000).toFixed(1)} s; the store holds ${Math.round(perTask)} bytes per sleeping task`);
  if (startedLate) console.log(`${name}: starting ended ${((Date.now() - massAt) / 1000).toFixed(1)} s past the moment they were due: the figure below counts that time`);
  const all = await waitFor(MASS, Math.max(0, massAt - Date.now()) + 120_000);
  const lastMs = Math.max(...woke);
  console.log(
    `${name}: ${MASS} tasks due at one moment, 2 instances: ${all ? `all woke within ${(lastMs / 1000).toFixed(1)} s (${Math.round(MASS / (lastMs / 1000))} per second)` : `only ${woke.length} woke within 120 s`}; lateness p50 ${quantile(woke, 0.5)} ms — target all within 20 s`,
  );
  await a!.close();
  await b!.close();
}

const only = process.argv.slice(2);
const alone = process.argv[1]?.endsWith("wakeups.js") === true;
if (alone && (only.length === 0 || only.includes("redis"))) {
  const prefix = `bench-wake-${process.pid}:`;
  try {
    await bench(
      "redis",
      () => createRedisStore({ url: REDIS_URL, prefix, onWarning: () => {} }),
      () => redisBytes(REDIS_URL, prefix),
    );
  } finally {
    await dropRedisPrefix(REDIS_URL, prefix);
  }
}
if (alone && (only.length === 0 || only.includes("postgres"))) {
  const schema = `bench_wake_${process.pid}`;
  try {
    await bench(
      "postgres",
      () => createPostgresStore({ connectionString: POSTGRES_URL, schema }),
      () => postgresBytes(POSTGRES_URL, schema),
    );
  } finally {
    await dropPostgresSchema(POSTGRES_URL, schema);
  }
}
