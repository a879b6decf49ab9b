import { runCli } from "../support/cli.js";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createRuntime, createTaskAdmin, elicit, parseKeyRing, patched, type Runtime, sleep, step, type Store, tool, waitForSignal } from "mcp-yield";
import { replayFixtures } from "mcp-yield/testing";
import { keygen } from "../../src/cli.js";
import { POSTGRES_URL } from "../support/postgres.js";
import { REDIS_URL } from "../support/redis.js";
import { type SharedStoreKind, sharedStores } from "../support/stores.js";
import { redisClusterAvailable, startRedisCluster } from "../support/redis-cluster.js";
import { createRedisStore } from "mcp-yield/redis";
import { tamperedEnd } from "../support/tamper.js";
import { until } from "../support/instances.js";

// Operating tasks in production: `npx mcp-yield tasks list|show|cancel` against the store the
// servers share (Redis or PostgreSQL), and saved journals (`npx mcp-yield export`) replayed
// against changed code (`replayFixtures`).

const ring = keygen("ops");
const keys = parseKeyRing(ring);
const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } };
const info = { clientCapabilities: { elicitation: {}, ...TASKS }, principal: "alice@example.com" };
// On a Redis Cluster too (`--redis-cluster`), started for this file.
const cluster = redisClusterAvailable ? await startRedisCluster() : undefined;
const kinds: Array<Pick<SharedStoreKind, "make" | "drop" | "cliFlags"> & { name: string }> = [
  ...sharedStores("operate"),
  ...(cluster === undefined
    ? []
    : [
        {
          name: "redis cluster",
          make: () => createRedisStore({ clusterUrls: cluster.urls, prefix: "operate:", onWarning: () => {} }),
          drop: () => cluster.stop(),
          cliFlags: ["--redis-cluster", cluster.urls.slice(0, 2).join(","), "--redis-prefix", "operate:"],
        },
      ]),
];
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});
afterAll(async () => {
  for (const kind of kinds) await kind.drop();
});

const cli = (argv: string[], env: Record<string, string | undefined> = {}) => runCli(argv, { env: { MCP_YIELD_KEYS: ring, ...env }, stdin: async () => "" });

/** A command's JSON output; a failure shows the command's own error. */
function jsonOf<T = unknown>(result: { code: number; out: string; err: string }): T {
  expect({ code: result.code, err: result.err }).toEqual({ code: 0, err: "" });
  return JSON.parse(result.out) as T;
}

async function settled(runtime: Runtime, taskId: string, want: (s: string) => boolean): Promise<Record<string, unknown>> {
  for (let i = 0; i < 400; i++) {
    const t = (await runtime.getTask({ taskId }, info)) as unknown as Record<string, unknown>;
    if (want(String(t.status))) return t;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`task ${taskId} did not settle`);
}

const approve = tool({
  name: "approve",
  description: "",
  input: z.object({ amount: z.number() }),
  task: "required",
  *run({ amount }) {
    const quote = yield* step("quote", () => amount * 2);
    const ok = yield* elicit(`Approve ${quote}?`, z.object({ ok: z.boolean() }), { key: "approval" });
    return ok.action === "accept" ? `approved ${quote}` : "declined";
  },
});
const nap = tool({
  name: "nap",
  description: "",
  input: z.object({}),
  task: "required",
  *run() {
    yield* step("before", () => 1);
    yield* sleep(600_000); // within the task's lifetime (1 hour by default)
    return "woke";
  },
});
const hold = tool({
  name: "hold",
  description: "",
  input: z.object({}),
  task: "required",
  *run() {
    const got = yield* waitForSignal("go", z.object({ go: z.boolean() }));
    return JSON.stringify(got);
  },
});
const spin = tool({
  name: "spin",
  description: "",
  input: z.object({}),
  task: "required",
  async *run() {
    yield* step("forever", (signal) => new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason))));
    return "never";
  },
});
// Its card service is down until `cardService.up`: the task is held once `charge` runs out of attempts.
const cardService = { up: false, charges: 0 };
const charge = tool({
  name: "charge",
  description: "",
  input: z.object({}),
  task: "required",
  async *run() {
    const receipt = yield* step(
      "charge",
      () => {
        cardService.charges++;
        if (!cardService.up) throw new Error("card service down");
        return "R-1";
      },
      { retry: { attempts: 2, initialMs: 5 } },
    );
    return receipt;
  },
});
const quick = tool({
  name: "quick",
  description: "",
  input: z.object({}),
  task: "required",
  *run() {
    return "done";
  },
});

describe.each(kinds)("npx mcp-yield tasks on $name", (kind) => {
  const flags = () => kind.cliFlags;

  it("lists tasks with status, tool, age and hashed principal, filters them, shows one with its journal, and cancels through the same transition as tasks/cancel", async () => {
    const store: Store = await kind.make();
    const runtime = createRuntime({ state: { keys }, store, onError: () => {}, tasks: { leaseMs: 2000, sweepMs: 100 } });
    open.push(store, runtime);
    const defs = [approve, nap, hold, spin, quick];
    runtime.define(defs);
    const start = async (def: (typeof defs)[number], args: Record<string, unknown> = {}) => ((await runtime.callTool(def, { name: def.name, arguments: args }, info)) as { taskId: string }).taskId;
    const ids = { approve: await start(approve, { amount: 21 }), nap: await start(nap), hold: await start(hold), spin: await start(spin), quick: await start(quick) };
    await settled(runtime, ids.approve, (s) => s === "input_required");
    await settled(runtime, ids.quick, (s) => s === "completed");

    const listed = await cli(["tasks", "list", ...flags(), "--json"]);
    expect(listed.err).toBe("");
    expect(listed.code).toBe(0);
    const rows = (JSON.parse(listed.out) as { tasks: Array<Record<string, unknown>> }).tasks;
    expect(new Set(rows.map((r) => r.taskId))).toEqual(new Set(Object.values(ids)));
    const row = (id: string) => rows.find((r) => r.taskId === id)!;
    expect(row(ids.approve)).toMatchObject({ tool: "approve", status: "input_required", state: "waiting for an answer (approval)", records: 1 });
    expect(row(ids.quick)).toMatchObject({ tool: "quick", status: "completed" });
    expect(row(ids.spin)).toMatchObject({ status: "working", state: expect.stringMatching(/^running on instance /) });
    // Principals are digests unless asked for.
    expect(row(ids.approve).principal).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(listed.out).not.toContain("alice");
    const revealed = jsonOf<{ tasks: unknown[] }>(await cli(["tasks", "list", ...flags(), "--json", "--principals"])).tasks as Array<Record<string, unknown>>;
    expect(revealed.every((r) => r.principal === "alice@example.com")).toBe(true);
    // Asleep and waiting for a signal are told apart (both are "working" on the wire).
    for (let i = 0; i < 100; i++) {
      const now = jsonOf<{ tasks: unknown[] }>(await cli(["tasks", "list", ...flags(), "--json", "--tool", "nap"])).tasks as Array<Record<string, unknown>>;
      if (String(now[0]?.state).startsWith("asleep until")) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    const filtered = jsonOf<{ tasks: unknown[] }>(await cli(["tasks", "list", ...flags(), "--json", "--status", "working", "--tool", "nap"])).tasks as Array<Record<string, unknown>>;
    expect(filtered).toEqual([expect.objectContaining({ taskId: ids.nap, state: expect.stringMatching(/^asleep until 20/) })]);
    const byStatus = jsonOf<{ tasks: unknown[] }>(await cli(["tasks", "list", ...flags(), "--json", "--status", "completed,input_required"])).tasks as Array<Record<string, unknown>>;
    expect(new Set(byStatus.map((r) => r.taskId))).toEqual(new Set([ids.quick, ids.approve]));
    expect(jsonOf<{ tasks: unknown[] }>(await cli(["tasks", "list", ...flags(), "--json", "--limit", "2"])).tasks).toHaveLength(2);
    // The table for people.
    const table = await cli(["tasks", "list", ...flags()]);
    expect(table.out.split("\n")[0]).toMatch(/^TASK\s+STATUS\s+TOOL\s+AGE\s+PRINCIPAL\s+NOW$/);
    expect(table.out).toContain(ids.hold);

    // show: the record and its journal, read as inspect reads a token.
    const shown = await cli(["tasks", "show", ids.approve, ...flags()]);
    expect(shown.code).toBe(0);
    expect(shown.out).toContain(`task ${ids.approve}: input_required — waiting for an answer (approval)`);
    expect(shown.out).toMatch(/#0 step\("quote"\) → 42/);
    expect(shown.out).toMatch(/waiting for\n\s+approval: elicitation\/create/);
    const shownJson = jsonOf(await cli(["tasks", "show", ids.quick, ...flags(), "--json"])) as Record<string, unknown>;
    expect(shownJson).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: "done" }] } });

    // cancel: at once for a task that asks, sleeps or waits; by its run's heartbeat for a running one.
    for (const id of [ids.approve, ids.nap, ids.hold]) {
      const cancelled = await cli(["tasks", "cancel", id, ...flags()]);
      expect(cancelled.out).toBe(`task ${id}: cancelled`);
      expect((await runtime.getTask({ taskId: id }, info)).status).toBe("cancelled");
    }
    const stopping = await cli(["tasks", "cancel", ids.spin, ...flags(), "--json"]);
    expect(jsonOf(stopping)).toMatchObject({ taskId: ids.spin, status: "working", state: expect.stringContaining("being cancelled") });
    expect((await settled(runtime, ids.spin, (s) => s !== "working")).status).toBe("cancelled");
    // A finished task stays as it ended.
    expect((await cli(["tasks", "cancel", ids.quick, ...flags()])).out).toBe(`task ${ids.quick}: completed`);
  }, 60_000);

  it("a task held for an operator: list and show say why, retry continues it to completion on another instance, fail ends one", async () => {
    const store: Store = await kind.make();
    const first = createRuntime({ state: { keys }, store, onError: () => {}, tasks: { leaseMs: 2000, sweepMs: 50 } });
    open.push(store, first);
    first.define([charge]);
    cardService.up = false;
    cardService.charges = 0;
    const start = async () => ((await first.callTool(charge, { name: "charge", arguments: {} }, info)) as { taskId: string }).taskId;
    const [retried, failed] = [await start(), await start()];
    for (const id of [retried, failed]) await until(async () => ((await createTaskAdmin({ store }).show(id))?.statusMessage?.startsWith("needs attention") ? true : undefined));
    const rows = jsonOf<{ tasks: unknown[] }>(await cli(["tasks", "list", ...flags(), "--json", "--tool", "charge"])).tasks as Array<Record<string, unknown>>;
    expect(rows.find((r) => r.taskId === retried)).toMatchObject({
      status: "working",
      statusMessage: 'needs attention: step("charge") failed after 2 attempts: Error: card service down',
      state: expect.stringMatching(/^needs attention since \S+Z: step\("charge"\) failed after 2 attempts: Error: card service down \(tasks retry or tasks fail\)$/),
    });
    expect((await cli(["tasks", "show", retried, ...flags()])).out).toContain(`task ${retried}: working — needs attention since`);
    // Fixed: the instance that held it is gone; retried, another one completes it.
    await first.close();
    cardService.up = true;
    // Retried while no instance runs: the CLI's answer shows the task as the retry left it (an
    // instance already running would take it over at once, through the change feed, and could
    // complete it before the CLI reads it back).
    const retry = await cli(["tasks", "retry", retried, ...flags(), "--json"]);
    expect(jsonOf(retry)).toMatchObject({ taskId: retried, status: "working" });
    const second = createRuntime({ state: { keys }, store, onError: () => {}, tasks: { leaseMs: 2000, sweepMs: 50 } });
    open.push(second);
    second.define([charge]);
    const done = await settled(second, retried, (s) => s === "completed");
    expect(done.result).toMatchObject({ content: [{ type: "text", text: "R-1" }] });
    expect(cardService.charges).toBe(2 + 2 + 1);
    const ended = await cli(["tasks", "fail", failed, ...flags(), "--reason", "refunded by hand"]);
    expect(ended).toMatchObject({ code: 0, out: `task ${failed}: failed` });
    expect(await second.getTask({ taskId: failed }, info)).toMatchObject({ status: "failed", statusMessage: "refunded by hand" });
    // Neither applies to a task that is not held; --reason only to fail.
    expect(await cli(["tasks", "retry", retried, ...flags()])).toMatchObject({ code: 1, err: expect.stringContaining("is not held for an operator (it is completed)") });
    expect(await cli(["tasks", "retry", retried, ...flags(), "--reason", "x"])).toMatchObject({ code: 1, err: expect.stringContaining("--reason goes with tasks fail") });
  }, 60_000);

  it("bulk: cancel, retry and fail every task a filter selects — a dry run first, a count after, the ones it cannot change named", async () => {
    const store: Store = await kind.make();
    const runtime = createRuntime({ state: { keys }, store, onError: () => {}, tasks: { leaseMs: 2000, sweepMs: 50 } });
    open.push(store, runtime);
    runtime.define([charge, nap, quick]);
    cardService.up = false;
    const start = async (def: typeof charge, who = info) => ((await runtime.callTool(def, { name: def.name, arguments: {} }, who)) as { taskId: string }).taskId;
    const held = [await start(charge), await start(charge), await start(charge)];
    const bob = { ...info, principal: "bob@example.com" };
    const naps = [await start(nap), await start(nap, bob)];
    const done = await start(quick);
    const admin = createTaskAdmin({ store });
    for (const id of held) await until(async () => ((await admin.show(id))?.statusMessage?.startsWith("needs attention") ? true : undefined));
    // The store keeps the other tests' tasks: the counting commands take this test's only (its
    // first task's creation, on the store's clock, onwards).
    const since = ["--since", (await admin.show(held[0]!))!.createdAt];
    await settled(runtime, done, (s) => s === "completed");
    const mine = (ids: string[]) => (r: { taskIds: string[] }) => expect(new Set(r.taskIds)).toEqual(new Set(ids));

    // A dry run selects and changes nothing; filters combine.
    const dry = jsonOf<{ matched: number; changed: number; taskIds: string[] }>(await cli(["tasks", "retry", ...flags(), "--needs-attention", "--dry-run", "--json"]));
    expect(dry).toMatchObject({ matched: 3, changed: 0 });
    mine(held)(dry);
    expect((await cli(["tasks", "retry", ...flags(), "--needs-attention", "--dry-run"])).out.split("\n")[0]).toBe("would retry 3 tasks:");
    const bobs = jsonOf<{ taskIds: string[] }>(await cli(["tasks", "cancel", ...flags(), ...since, "--tool", "nap", "--principal", "bob@example.com", "--dry-run", "--json"]));
    mine([naps[1]!])(bobs);
    const digest = jsonOf<{ tasks: Array<{ taskId: string; principal: string }> }>(await cli(["tasks", "list", ...flags(), "--json", "--tool", "nap"])).tasks.find(
      (r) => r.taskId === naps[1],
    )!.principal;
    mine([naps[1]!])(jsonOf(await cli(["tasks", "cancel", ...flags(), ...since, "--principal", digest, "--dry-run", "--json"])));
    expect(jsonOf<{ tasks: unknown[] }>(await cli(["tasks", "list", ...flags(), "--json", "--since", "2h", "--needs-attention"])).tasks).toHaveLength(3);
    expect(jsonOf<{ tasks: unknown[] }>(await cli(["tasks", "list", ...flags(), "--json", "--since", "2999-01-01T00:00:00Z"])).tasks).toEqual([]);

    // Fail one by id, retry the rest by filter (the service fixed), cancel the naps by tool.
    await cli(["tasks", "fail", held[0]!, ...flags()]);
    cardService.up = true;
    const retried = await cli(["tasks", "retry", ...flags(), ...since, "--tool", "charge"]);
    expect(retried).toMatchObject({ code: 0, out: `retried 2 of 3 tasks matched; 1 skipped:\n  ${held[0]}: not held for an operator` });
    for (const id of held.slice(1)) expect((await settled(runtime, id, (s) => s === "completed")).result).toMatchObject({ content: [{ text: "R-1" }] });
    expect((await cli(["tasks", "cancel", ...flags(), ...since, "--tool", "nap"])).out).toBe("cancelled 2 of 2 tasks matched");
    for (const id of naps) expect((await runtime.getTask({ taskId: id }, id === naps[1] ? bob : info)).status).toBe("cancelled");
    expect((await cli(["tasks", "cancel", ...flags(), ...since, "--tool", "quick"])).out).toBe(`cancelled 0 of 1 task matched; 1 skipped:\n  ${done}: already completed`);

    // What is refused: no filter, an id with filters, a dry run of one id, a bad --since.
    expect(await cli(["tasks", "cancel", ...flags()])).toMatchObject({ code: 1, err: expect.stringContaining("takes a task id, or at least one filter") });
    expect(await cli(["tasks", "cancel", done, ...flags(), "--tool", "quick"])).toMatchObject({ code: 1, err: expect.stringContaining("takes one task id, or filters") });
    expect(await cli(["tasks", "cancel", done, ...flags(), "--dry-run"])).toMatchObject({ code: 1, err: expect.stringContaining("--dry-run goes with tasks cancel, retry or fail by filter") });
    expect(await cli(["tasks", "list", ...flags(), "--since", "yesterday"])).toMatchObject({ code: 1, err: expect.stringContaining("--since takes an ISO time") });
  }, 60_000);

  it("says clearly what is wrong: no store, an unknown task, a bad filter, an unknown option", async () => {
    expect(await cli(["tasks", "list"])).toMatchObject({ code: 1, err: expect.stringContaining("no store named: tasks live in the store the servers share") });
    expect(await cli(["tasks", "show", "nope", ...flags()])).toMatchObject({ code: 1, err: expect.stringContaining('no task "nope" in this store') });
    expect(await cli(["tasks", "cancel", "nope", ...flags()])).toMatchObject({ code: 1, err: expect.stringContaining('no task "nope"') });
    // Task ids are base64url: one may begin with "-" and is still an id, not an option.
    expect(await cli(["tasks", "show", "-Uinia7_H15zN7KZBJHNvQ", ...flags()])).toMatchObject({ code: 1, err: expect.stringContaining('no task "-Uinia7_H15zN7KZBJHNvQ"') });
    expect(await cli(["tasks", "cancel", ...flags(), "-Uinia7_H15zN7KZBJHNvQ"])).toMatchObject({ code: 1, err: expect.stringContaining('no task "-Uinia7_H15zN7KZBJHNvQ"') });
    expect(jsonOf<{ tasks: unknown[] }>(await cli(["tasks", "list", ...flags(), "--tool", "-odd-name", "--json"])).tasks).toEqual([]);
    expect(await cli(["tasks", "list", ...flags(), "--status", "sleeping"])).toMatchObject({
      code: 1,
      err: expect.stringContaining('unknown status "sleeping": one of working, input_required, completed, failed, cancelled'),
    });
    expect(await cli(["tasks", "list", ...flags(), "--limit", "0"])).toMatchObject({ code: 1, err: expect.stringContaining("--limit must be a positive integer") });
    expect(await cli(["tasks", "list", ...flags(), "--bogus"])).toMatchObject({ code: 1, err: expect.stringMatching(/Unknown option '--bogus'/) });
    expect(await cli(["tasks", "purge"])).toMatchObject({ code: 1, err: expect.stringContaining("tasks takes list, show, cancel, retry, fail or reindex") });
    expect(await cli(["tasks", "list", "--redis", REDIS_URL, "--postgres", POSTGRES_URL])).toMatchObject({ code: 1, err: expect.stringContaining("give one") });
    if (kind.name === "postgres") {
      // An operator's command never creates tables: a wrong schema is said to be one.
      expect(await cli(["tasks", "list", "--postgres", POSTGRES_URL, "--postgres-schema", "no_such_schema_here"])).toMatchObject({
        code: 1,
        err: expect.stringContaining('PostgreSQL has no mcp-yield store in schema "no_such_schema_here"'),
      });
    }
  });
});

describe("saved journals as fixtures: export, then replayFixtures", () => {
  // A booking tool; `message` lets a test change one ask's text, `withPatch` adds a patched branch.
  const booking = (options: { message?: string; withPatch?: boolean; renamedStep?: boolean } = {}) =>
    tool({
      name: "book",
      description: "",
      input: z.object({ city: z.string() }),
      *run({ city }) {
        const hotels = yield* step(options.renamedStep ? "find" : "search", () => [`${city} Grand`, `${city} Inn`]);
        const pick = yield* elicit(options.message ?? "Which hotel?", z.object({ hotel: z.string() }), { key: "hotel" });
        if (options.withPatch && (yield* patched("loyalty"))) yield* step("loyalty", () => "gold");
        const price = yield* step("price", () => 120);
        const ok = yield* elicit(`Book ${pick.action === "accept" ? pick.content.hotel : hotels[0]} for ${price}?`, z.object({ ok: z.boolean() }), { key: "confirm" });
        return ok.action === "accept" ? "booked" : "not booked";
      },
    });
  const dir = mkdtempSync(join(tmpdir(), "mcp-yield-fixtures-"));

  /** A real call to its second ask: the requestState the client holds then. */
  async function secondRoundToken(): Promise<string> {
    const runtime = createRuntime({ state: { keys } });
    const args = { name: "book", arguments: { city: "Oslo" } };
    const caps = { clientCapabilities: { elicitation: {} }, principal: "alice" };
    const r1 = (await runtime.callTool(booking(), args, caps)) as { requestState: string };
    const r2 = (await runtime.callTool(booking(), { ...args, requestState: r1.requestState, inputResponses: { hotel: { action: "accept", content: { hotel: "Oslo Inn" } } } }, caps)) as {
      requestState: string;
    };
    return r2.requestState;
  }

  it("a fixture exported from a real call replays green against the code that made it, and red — naming the changed ask — after its message changes", async () => {
    const token = await secondRoundToken();
    const file = join(dir, "book-round2.json");
    const exported = await cli(["export", token, "--arguments", JSON.stringify({ city: "Oslo" }), "--out", file]);
    expect(exported).toMatchObject({ code: 0, err: "" });
    expect(exported.out).toBe(`wrote ${file}: book, 3 records, waiting for an answer`);
    const text = readFileSync(file, "utf8");
    // No secret: not the token, not the key, not the principal.
    expect(text).not.toContain(token.slice(4, 40));
    expect(text).not.toContain(ring.split(":")[1]!);
    expect(text).not.toContain("alice");
    expect(JSON.parse(text)).toMatchObject({ format: "mcp-yield/journal-fixture", tool: "book", source: "requestState", arguments: { city: "Oslo" }, end: { at: "ask" } });

    expect(await replayFixtures([booking()], dir)).toMatchObject({ failures: [], verdicts: [{ tool: "book", ok: true }] });
    // The first ask reworded: calls in flight would diverge there.
    const reworded = await replayFixtures([booking({ message: "Which hotel would you like?" })], dir);
    expect(reworded.failures).toHaveLength(1);
    expect(reworded.failures[0]).toContain(`${file} (book): at effect #1, elicit under key "hotel": its message text (it is now "Which hotel would you like?") changed since the journal was recorded`);
    expect(reworded.verdicts[0]).toMatchObject({ ok: false, index: 1 });
    // A step renamed, and the ask the call waits for changed, are caught too.
    expect((await replayFixtures([booking({ renamedStep: true })], dir)).failures[0]).toMatch(/at effect #0 the journal recorded step\("search"\) but the code now runs step\("find"\)/);
    // A patched() branch keeps the old journal on its old path: green.
    expect((await replayFixtures([booking({ withPatch: true })], dir)).failures).toEqual([]);
  });

  it("the ask a call waits for, changed, turns its fixture red too; a tool removed, a bad file and wrong arguments are named", async () => {
    const token = await secondRoundToken();
    const fixture = jsonOf(await cli(["export", token, "--arguments", '{"city":"Oslo"}'])) as Record<string, unknown>;
    const changedLastAsk = tool({
      name: "book",
      description: "",
      input: z.object({ city: z.string() }),
      *run({ city }) {
        yield* step("search", () => [`${city} Grand`, `${city} Inn`]);
        yield* elicit("Which hotel?", z.object({ hotel: z.string() }), { key: "hotel" });
        yield* step("price", () => 120);
        yield* elicit("Shall I book it?", z.object({ ok: z.boolean() }), { key: "confirm" });
        return "booked";
      },
    });
    const report = await replayFixtures([changedLastAsk], [{ file: "round2", fixture }]);
    expect(report.failures).toEqual([expect.stringContaining('round2 (book): at effect #3, elicit under key "confirm": its message text (it is now "Shall I book it?") changed')]);
    expect((await replayFixtures([], [{ file: "f", fixture }])).failures).toEqual(['f (book): no tool named "book" among the definitions given (renamed or removed: calls in flight would fail)']);
    expect((await replayFixtures([booking()], [{ file: "junk", fixture: { format: "nope" } }])).failures[0]).toMatch(/^junk \(\?\): not a journal fixture: format/);
    expect(await cli(["export", token, "--arguments", '{"city":"Bergen"}'])).toMatchObject({ code: 1, err: expect.stringContaining("not the ones this call was made with") });
    expect(await cli(["export", token])).toMatchObject({ code: 1, err: expect.stringContaining("this call had arguments: give them") });
    expect(await cli(["export", tamperedEnd(token, 3), "--arguments", '{"city":"Oslo"}'])).toMatchObject({ code: 1, err: expect.stringContaining("the token was refused") });
  });

  it.each(kinds)("a task's journal exported from the $name store replays green, and red after a change", async (kind) => {
    const store = await kind.make();
    const runtime = createRuntime({ state: { keys }, store, onError: () => {}, tasks: { leaseMs: 2000, sweepMs: 100 } });
    open.push(store, runtime);
    runtime.define([approve]);
    const { taskId } = (await runtime.callTool(approve, { name: "approve", arguments: { amount: 5 } }, info)) as { taskId: string };
    await settled(runtime, taskId, (s) => s === "input_required");
    const exported = await cli(["export", taskId, ...kind.cliFlags]);
    expect(exported.code).toBe(0);
    const fixture = JSON.parse(exported.out) as Record<string, unknown>;
    expect(fixture).toMatchObject({ tool: "approve", source: "task", end: { at: "ask", outstanding: { approval: expect.any(String) } } });
    expect(exported.out).not.toContain("alice");
    expect((await replayFixtures([approve], [{ file: "task", fixture }])).failures).toEqual([]);
    const changed = tool({
      name: "approve",
      description: "",
      input: z.object({ amount: z.number() }),
      task: "required",
      *run({ amount }) {
        const quote = yield* step("quote", () => amount * 2);
        yield* elicit(`Approve the amount of ${quote}?`, z.object({ ok: z.boolean() }), { key: "approval" });
        return "x";
      },
    });
    expect((await replayFixtures([changed], [{ file: "task", fixture }])).failures[0]).toContain('elicit under key "approval": its message text (it is now "Approve the amount of 10?") changed');
  });
});

describe.each(kinds)("the mcp-yield command as a process, on $name", (kind) => {
  it("tasks list connects, prints and exits by itself (no connection left open)", async () => {
    const { execFile } = await import("node:child_process");
    await (await kind.make()).close(); // the servers' store exists (a Postgres one creates its tables)
    const started = performance.now();
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        ["--conditions=mcp-yield-source", "--import", "tsx", "src/cli.ts", "tasks", "list", "--json", ...kind.cliFlags],
        { timeout: 60_000 },
        (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr }),
      );
      child.stdin?.end();
    });
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(Array.isArray(JSON.parse(stdout).tasks)).toBe(true);
    expect(performance.now() - started).toBeLessThan(60_000);
  }, 70_000);
});

describe("the list of tasks", () => {
  it("loses a task once its record expired: the sweepers drop it (no list grows without bound)", async () => {
    const { createMemoryStore } = await import("mcp-yield");
    const store = createMemoryStore();
    const first = createRuntime({ state: { keys }, store, onError: () => {}, tasks: { ttlMs: 300, sweepMs: 50 } });
    open.push(first);
    first.define([quick]);
    const { taskId } = (await first.callTool(quick, { name: "quick", arguments: {} }, info)) as { taskId: string };
    expect((await store.members("tasks", 10)).map((m) => m.member)).toEqual([taskId]);
    expect(await createTaskAdmin({ store }).list()).toEqual([expect.objectContaining({ taskId, status: "completed" })]);
    // Past its lifetime the record is gone; a (new) instance's first sweep drops the entry.
    await new Promise((r) => setTimeout(r, 400));
    expect(await createTaskAdmin({ store }).list()).toEqual([]);
    const second = createRuntime({ state: { keys }, store, onError: () => {}, tasks: { sweepMs: 50 } });
    open.push(second);
    second.define([quick]);
    for (let i = 0; i < 100 && (await store.members("tasks", 10)).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await store.members("tasks", 10)).toEqual([]);
  });
});
