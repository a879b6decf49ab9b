// `npm run bench:bulk`: an operator's bulk actions on PostgreSQL (issue 56 point 2's target:
// 10,000 tasks in ≤ 30 s). Makes BENCH_BULK_TASKS tasks (default 10,000) that are held for an
// operator (a step out of its one attempt), stops the servers, then times `bulk("retry")` on
// them (each made due), `bulk("cancel")` on them, and a filtered `list` page — wall time, one
// process, the store on this machine. Reported, not a target in `npm run bench`.
import { createRuntime, createTaskAdmin } from "mcp-yield";
import { createPostgresStore } from "mcp-yield/postgres";
import { failing } from "./task-tools.js";

const URL = process.env.MCP_YIELD_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const TASKS = Number(process.env.BENCH_BULK_TASKS ?? 10_000);
const schema = `bench_bulk_${process.pid}`;
const secret = new Uint8Array(32).fill(7);

const seconds = (since: number) => ((performance.now() - since) / 1000).toFixed(2);
const store = await createPostgresStore({ connectionString: URL, schema });
try {
  const runtime = createRuntime({ state: { keys: [{ id: "b", secret }] }, store, onError: () => {}, tasks: { sweepMs: 60_000, ttlMs: 3_600_000 } });
  runtime.define([failing]);
  // Spread over 100 principals: one keeps at most 1,000 tasks at once.
  const info = (i: number) => ({ clientCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } }, principal: `user-${i % 100}` });
  let made = performance.now();
  for (let i = 0; i < TASKS; i += 64) await Promise.all(Array.from({ length: Math.min(64, TASKS - i) }, (_, j) => runtime.callTool(failing, { name: "failing", arguments: {} }, info(i + j))));
  await runtime.idle();
  await runtime.close();
  console.log(`made ${TASKS} held tasks in ${seconds(made)} s`);
  const admin = createTaskAdmin({ store });
  made = performance.now();
  const page = await admin.list({ needsAttention: true, limit: 100 });
  console.log(`list --needs-attention, a page of ${page.length}: ${seconds(made)} s`);
  for (const action of ["retry", "cancel"] as const) {
    const started = performance.now();
    const done = await admin.bulk(action, action === "retry" ? { needsAttention: true } : { tool: "failing", status: "working" });
    console.log(`bulk ${action}: ${done.changed} of ${done.matched} changed in ${seconds(started)} s`);
  }
} finally {
  await store.close();
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: URL });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await client.end();
}
