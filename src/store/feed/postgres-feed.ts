import type pg from "pg";
import { randomUuid } from "../../state/random.js";
import type { FeedListener, Listening } from "../store.js";

// store/feed/postgres-feed.ts owns the PostgreSQL store's change-feed listener: one connection of its
// own holding LISTEN (a session's state: it cannot come from the pool), reopened with backoff when
// it drops, the listener's `reset` called each time it is back. A pooler in transaction mode
// (PgBouncer's usual setting) hands each statement to any server connection, so LISTEN there hears
// nothing: a probe NOTIFY sent through the store's pool must come back on the listening
// connection within the time limit, or the listener closes and says the store polls instead.
// A probe whose NOTIFY failed (a server too loaded to answer within the store's timeout, as an
// instance starts) tells nothing about a pooler: it is sent again, and if none could be sent the
// listen stays open — taking that for a pooler cost an instance its notices for its whole life.

/** A NOTIFY payload the probe sends: never a notice of the runtime's (those are JSON). */
const PROBE = "mcp-yield-feed-probe:";
/** Probes sent at most, while their NOTIFY fails (50 ms, then 100 ms, between them). */
const PROBE_TRIES = 3;

/** Where the listening connection comes from, and how notices are sent (the store's pool). */
export interface PostgresFeedParts {
  /** A new connection (not from the pool: it stays LISTENing). */
  connect: () => Promise<pg.Client>;
  /** One statement through the store's pool (a probe NOTIFY). */
  notify: (channel: string, payload: string) => Promise<unknown>;
  timeoutMs: number;
  warn: (message: string) => void;
}

/** Listen on `channel` (a name made by the store: plain, ≤ 63 bytes). `undefined` when notices cannot arrive. */
export async function listenPostgres({ connect, notify, timeoutMs, warn }: PostgresFeedParts, channel: string, listener: FeedListener): Promise<Listening | undefined> {
  let client: pg.Client | undefined;
  let closed = false;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let probe: { payload: string; heard: () => void } | undefined;

  const open = async (): Promise<pg.Client> => {
    const c = await connect();
    c.on("notification", (n) => {
      if (n.channel !== channel) return;
      const payload = n.payload ?? "";
      if (payload.startsWith(PROBE)) {
        if (probe?.payload === payload) probe.heard();
      } else listener.message(payload);
    });
    await c.query(`LISTEN "${channel}"`);
    return c;
  };
  /** The connection dropped: open another (backoff to 2 s), then tell the listener it may have missed notices. */
  const reopen = (attempt: number) => {
    if (closed) return;
    retry = setTimeout(
      () =>
        void open()
          .then((c) => {
            if (closed) return void c.end().catch(() => {});
            adopt(c);
            listener.reset();
          })
          .catch(() => reopen(attempt + 1)),
      Math.min(50 * 2 ** attempt, 2000),
    );
    retry.unref?.();
  };
  const adopt = (c: pg.Client) => {
    client = c;
    c.on("error", () => {});
    c.once("end", () => {
      if (client === c) reopen(0);
    });
  };

  try {
    const first = await open();
    adopt(first);
    // Does a notice sent through the pool reach this connection? Not through a transaction pooler.
    let verdict: ProbeVerdict = "failed";
    for (let tries = 0; tries < PROBE_TRIES && verdict === "failed"; tries++) {
      if (tries > 0) await new Promise((resolve) => setTimeout(resolve, 50 * tries));
      verdict = await new Promise<ProbeVerdict>((resolve) => {
        const timer = setTimeout(() => resolve("unheard"), 2 * timeoutMs);
        const end = (v: ProbeVerdict) => {
          clearTimeout(timer);
          resolve(v);
        };
        const payload = PROBE + randomUuid();
        probe = { payload, heard: () => end("heard") };
        notify(channel, payload).catch(() => end("failed"));
      });
      probe = undefined;
    }
    if (verdict === "failed")
      warn(
        `mcp-yield: the PostgreSQL store could not send a NOTIFY through its pool to check that notices arrive (${PROBE_TRIES} tries): it listens all the same. Through a pooler in transaction mode (PgBouncer) they would not arrive, and tasks are then found by polling only (sweepMs).`,
      );
    if (verdict === "unheard") {
      warn(
        `mcp-yield: PostgreSQL did not deliver a NOTIFY sent through the store's pool to its LISTEN connection within ${2 * timeoutMs} ms — a pooler in transaction mode (PgBouncer) is in between: tasks are found by polling only (sweepMs). For notices, give the store a direct connection (connectionString to PostgreSQL itself) or a session-mode pool.`,
      );
      throw new Error("no notices");
    }
  } catch (error) {
    closed = true;
    const c = client;
    client = undefined;
    await c?.end().catch(() => {});
    if ((error as Error).message !== "no notices")
      warn(`mcp-yield: the PostgreSQL store could not open its change-feed connection (${(error as Error).message}): tasks are found by polling only (sweepMs)`);
    return undefined;
  }
  return {
    close: async () => {
      closed = true;
      clearTimeout(retry);
      const c = client;
      client = undefined;
      await c?.end().catch(() => {});
    },
  };
}

/** What a probe found: its notice came back, it did not within the time limit, or its NOTIFY failed. */
type ProbeVerdict = "heard" | "unheard" | "failed";

/** A notify channel name for the store's `channel` in `namespace` (schema and table prefix): ≤ 63 bytes, PostgreSQL's identifier limit. */
export function postgresChannel(namespace: string, channel: string): string {
  const name = `${namespace}_${channel}`.replace(/[^A-Za-z0-9_]/g, "_").toLowerCase();
  if (name.length <= 63) return name;
  // FNV-1a of the whole name keeps long names of different stores apart.
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return `${name.slice(0, 54)}_${h.toString(16).padStart(8, "0")}`;
}
