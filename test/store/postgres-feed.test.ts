import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { listenPostgres } from "../../src/store/feed/postgres-feed.js";
import { POSTGRES_URL, postgresAvailable } from "../support/postgres.js";

// The PostgreSQL change feed checks, as it starts, that a NOTIFY sent through the store's pool
// comes back on its LISTEN connection (not through a pooler in transaction mode). A probe whose
// NOTIFY fails — a server too loaded to answer in time as an instance starts — says nothing
// about a pooler: it is sent again, and the listen is kept; only a probe sent and never heard
// turns notices off.

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const o of open.splice(0)) await o.close();
});

const channel = `mcpy_feed_probe_${process.pid}`;
const connect = async () => {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  client.on("error", () => {});
  await client.connect();
  return client;
};
/** NOTIFY on a connection of its own, failing its first `failures` calls (a store timing out). */
async function notifier(failures: number) {
  const sender = await connect();
  open.push({ close: () => sender.end() });
  let calls = 0;
  const notify = async (name: string, payload: string) => {
    if (++calls <= failures) throw new Error("store_unavailable: timed out");
    return sender.query("SELECT pg_notify($1, $2)", [name, payload]);
  };
  return { notify, calls: () => calls };
}
function listener() {
  const heard: string[] = [];
  return { heard, message: (m: string) => heard.push(m), reset: () => {} };
}

describe.skipIf(!postgresAvailable)("the PostgreSQL change feed's probe", () => {
  it("sends the probe again when its NOTIFY fails, and listens", async () => {
    const { notify, calls } = await notifier(2);
    const warnings: string[] = [];
    const l = listener();
    const listening = await listenPostgres({ connect, notify, timeoutMs: 500, warn: (m) => warnings.push(m) }, channel, l);
    expect(listening).toBeDefined();
    open.push(listening!);
    expect(calls()).toBe(3);
    expect(warnings).toEqual([]);
    await notify(channel, '{"a":1}');
    await expect.poll(() => l.heard).toEqual(['{"a":1}']);
  });

  it("keeps the listen, with a warning, when no probe could be sent", async () => {
    const { notify, calls } = await notifier(Number.POSITIVE_INFINITY);
    const warnings: string[] = [];
    const listening = await listenPostgres({ connect, notify, timeoutMs: 500, warn: (m) => warnings.push(m) }, channel, listener());
    expect(listening).toBeDefined();
    open.push(listening!);
    expect(calls()).toBe(3);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/could not send a NOTIFY .* it listens all the same/);
  });

  it("turns notices off, with a warning, when a probe sent is never heard (a transaction pooler)", async () => {
    // What a pooler in transaction mode does: the NOTIFY commits on a server connection, the
    // LISTEN was held by another one, and nothing comes back.
    const notify = async () => undefined;
    const warnings: string[] = [];
    const listening = await listenPostgres({ connect, notify, timeoutMs: 100, warn: (m) => warnings.push(m) }, channel, listener());
    expect(listening).toBeUndefined();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/did not deliver a NOTIFY/);
  });
});
