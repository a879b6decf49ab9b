// `npm run bench:list`: an operator's task list over 100,000 tasks (issue 56 point 2's target: a
// filtered page in ≤ 1 s, paged by cursor). On PostgreSQL and Redis: 1,000 tasks made by a
// server, copied to BENCH_LIST_TASKS (default 100,000) records straight into the store (SQL on
// PostgreSQL, the store's own writes on Redis), indexed by `reindex` (timed: the upgrade path),
// then 10 tasks of a rare tool and 10 held tasks made by the server. Each list page is timed 5
// times (wall, one process, the store on this machine): median and max. Reported, not a target
// in `npm run bench`.
import { createRuntime, createTaskAdmin, type Store, type TaskListOptions } from "mcp-yield";
import { createPostgresStore } from "mcp-yield/postgres";
import { createRedisStore } from "mcp-yield/redis";
import pg from "pg";
import { dropRedisPrefix } from "./cleanup.js";
import { failing, returning } from "./task-tools.js";

const POSTGRES_URL = process.env.MCP_YIELD_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const REDIS_URL = process.env.MCP_YIELD_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const TOTAL = Number(process.env.BENCH_LIST_TASKS ?? 100_000);
const MADE = 1000;
const secret = new Uint8Array(32).fill(9);

const quick = returning("quick");
const rare = returning("rare");
const info = (principal: string) => ({ clientCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } }, principal });

const ms = (since: number) => performance.now() - since;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Copies of the made tasks' records under new ids (each a second older per copy), in the store's list of tasks: `reindex` indexes them. */
type Copier = (ids: string[], copies: number) => Promise<void>;

async function bench(name: string, store: Store, copy: Copier): Promise<void> {
  const runtime = createRuntime({ state: { keys: [{ id: "l", secret }] }, store, onError: () => {}, tasks: { sweepMs: 600_000, ttlMs: 3_600_000, maxPerPrincipal: 10_000 } });
  runtime.define([quick, rare, failing]);
  const start = (def: typeof quick, principal: string) => runtime.callTool(def, { name: def.name, arguments: {} }, info(principal)) as Promise<{ taskId: string }>;
  let at = performance.now();
  const ids: string[] = [];
  for (let i = 0; i < MADE; i += 50) ids.push(...(await Promise.all(Array.from({ length: 50 }, (_, j) => start(quick, `user-${(i + j) % 100}`)))).map((t) => t.taskId));
  await runtime.idle();
  console.log(`${name}: made ${MADE} tasks in ${(ms(at) / 1000).toFixed(1)} s`);
  at = performance.now();
  await copy(ids, Math.ceil(TOTAL / MADE) - 1);
  console.log(`${name}: copied to ${TOTAL} task records in ${(ms(at) / 1000).toFixed(1)} s`);
  const admin = createTaskAdmin({ store });
  at = performance.now();
  const indexed = await admin.reindex();
  console.log(`${name}: reindex of ${indexed} tasks: ${(ms(at) / 1000).toFixed(1)} s`);
  await new Promise((r) => setTimeout(r, 5));
  const recent = new Date();
  const rares = await Promise.all(Array.from({ length: 10 }, () => start(rare, "rare-user")));
  await Promise.all(Array.from({ length: 10 }, () => start(failing, "ops")));
  await runtime.idle();
  await runtime.close();

  // A deep page: the cursor of the 50,000th task, as the pages before it would have handed it on.
  let deep: string | undefined;
  for (let page = await admin.listPage({ limit: 1000 }), read = 1000; ; page = await admin.listPage({ limit: 1000, after: page.next! }), read += 1000) {
    if (read >= TOTAL / 2 || page.next === undefined) {
      deep = page.next;
      break;
    }
  }
  const cases: Array<[string, TaskListOptions, number]> = [
    ["no filter, first page of 100", { limit: 100 }, 100],
    ["no filter, a page of 100 after 50,000", { limit: 100, ...(deep !== undefined ? { after: deep } : {}) }, 100],
    ["--tool rare (10 of 100,020)", { tool: "rare" }, 10],
    ["--needs-attention (10)", { needsAttention: true }, 10],
    ["--principal rare-user (10)", { principal: "rare-user" }, 10],
    ["--status working (10)", { status: "working" }, 10],
    ["--status completed, a page of 100", { status: "completed", limit: 100 }, 100],
    ["--tool rare --status completed", { tool: "rare", status: "completed" }, 10],
    ["--tool quick --status failed (none)", { tool: "quick", status: "failed" }, 0],
    ["--since (the last 20)", { since: recent }, 20],
  ];
  for (const [label, options, expected] of cases) {
    const times: number[] = [];
    let got = 0;
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      got = (await admin.list(options)).length;
      times.push(ms(t));
    }
    const flag = got === expected ? "" : `  (listed ${got}, expected ${expected})`;
    console.log(
      `${name}: ${label.padEnd(42)} median ${median(times).toFixed(0).padStart(5)} ms, max ${Math.max(...times)
        .toFixed(0)
        .padStart(5)} ms${flag}`,
    );
  }
  if (rares.length !== 10) throw new Error("rare tasks not made");
}

const schema = `bench_list_${process.pid}`;
const postgres = await createPostgresStore({ connectionString: POSTGRES_URL, schema });
const client = new pg.Client({ connectionString: POSTGRES_URL });
await client.connect();
try {
  await bench("postgres", postgres, async (ids, copies) => {
    // One statement per table: each made record copied `copies` times, its id suffixed, a second older per copy.
    await client.query(
      `INSERT INTO "${schema}".mcp_yield_kv (key, value, expires_at)
       SELECT kv.key || 'c' || n,
              jsonb_set(jsonb_set(kv.value::jsonb, '{id}', to_jsonb(substr(kv.key, 6) || 'c' || n)), '{created}', to_jsonb((kv.value::jsonb->>'created')::bigint - 1000 * n))::text,
              kv.expires_at
       FROM "${schema}".mcp_yield_kv kv, generate_series(1, $2::int) n WHERE kv.key = ANY($1::text[])`,
      [ids.map((id) => `task:${id}`), copies],
    );
    await client.query(
      `INSERT INTO "${schema}".mcp_yield_due (idx, member, at)
       SELECT 'tasks', d.member || 'c' || n, d.at FROM "${schema}".mcp_yield_due d, generate_series(1, $2::int) n WHERE d.idx = 'tasks' AND d.member = ANY($1::text[])`,
      [ids, copies],
    );
  });
} finally {
  await postgres.close();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
}

const prefix = `bench-list-${process.pid}:`;
const redis = await createRedisStore({ url: REDIS_URL, prefix });
try {
  await bench("redis", redis, async (ids, copies) => {
    const made = await Promise.all(ids.map(async (id) => ({ id, record: JSON.parse((await redis.get(`task:${id}`))!) as { id: string; created: number } })));
    const writes: Array<() => Promise<unknown>> = [];
    for (let n = 1; n <= copies; n++)
      for (const { id, record } of made) {
        const copy = { ...record, id: `${id}c${n}`, created: record.created - 1000 * n };
        writes.push(
          () => redis.add(`task:${copy.id}`, JSON.stringify(copy), 3_600_000),
          () => redis.schedule("tasks", copy.id, copy.created + 3_600_000),
        );
      }
    for (let i = 0; i < writes.length; i += 512) await Promise.all(writes.slice(i, i + 512).map((w) => w()));
  });
} finally {
  await dropRedisPrefix(REDIS_URL, prefix);
  await redis.close();
}
