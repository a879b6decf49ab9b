import { createCipheriv, createDecipheriv, createHmac, randomFillSync } from "node:crypto";
import { connect } from "node:net";
import { createRequestStateCodec } from "@modelcontextprotocol/server";
import { createMemoryStore, createRuntime, createStateCodec, type StateKey, type Store } from "mcp-yield";
import { argumentsDigest } from "../src/internal.js";
import { createPostgresStore } from "mcp-yield/postgres";
import { createRedisStore } from "mcp-yield/redis";
import { handWrittenRealistic, interleaved, realisticGenerator } from "./realistic-tools.js";
import { countGenerator, countStepsGenerator, driveCall, handWrittenAllCount, handWrittenCount, replayFloorCount, sdkCount } from "./counting-tools.js";

/**
 * The benchmark's variants, as factories the variant processes call by name. Each returns one
 * operation: a whole call of R rounds (replay and store sections), or one seal + open (codec).
 */

const secret = new Uint8Array(32).fill(42);
const POSTGRES_URL = process.env.MCP_YIELD_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const keys: StateKey[] = [{ id: "bench", secret }];
const info = { clientCapabilities: { elicitation: {} } };

type Call = Parameters<typeof driveCall>[0];

async function wholeCall(call: Call, rounds: number): Promise<() => Promise<number>> {
  // Sanity: the variant really takes R + 1 requests (R asks, then the completing retry).
  if ((await driveCall(call, rounds)) !== rounds + 1) throw new Error("variant took the wrong number of rounds");
  return () => driveCall(call, rounds);
}

/** (a) The generator through the runtime: the default `liveCalls` (`null`: resumes) or 0 (replays every round, as on another instance). */
export function generator(rounds: number, liveCalls: number | null = null) {
  const runtime = createRuntime({ state: { keys }, ...(liveCalls === null ? {} : { liveCalls }) });
  return wholeCall((p) => runtime.callTool(countGenerator, p, info), rounds);
}

/**
 * (a) on three instances without affinity: each request goes to the next instance in turn, as a
 * round-robin load balancer sends it (`liveCalls` as given: `null` for the default, or 0).
 */
export function generatorThreeInstances(rounds: number, liveCalls: number | null = null) {
  const runtimes = [0, 1, 2].map(() => createRuntime({ state: { keys }, ...(liveCalls === null ? {} : { liveCalls }) }));
  let next = 0;
  return wholeCall((p) => runtimes[next++ % 3]!.callTool(countGenerator, p, info), rounds);
}

/**
 * The floor of a Redis round trip: `rounds + 1` GETs (one per request of a whole call) over a
 * bare TCP socket, each sent when the last reply arrived — no client library, no parsing beyond
 * finding the reply's end. What a store operation costs above it is the client's and ours.
 */
export async function rawRedisRoundTrips(rounds: number): Promise<() => Promise<number>> {
  const url = new URL(process.env.MCP_YIELD_TEST_REDIS_URL ?? "redis://127.0.0.1:6379");
  const socket = connect(Number(url.port || 6379), url.hostname);
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  socket.setNoDelay(true);
  const command = Buffer.from("*2\r\n$3\r\nGET\r\n$22\r\nmcp-yield-bench:absent\r\n");
  let waiting: (() => void) | undefined;
  // A GET of an absent key answers "$-1\r\n": one reply per line end.
  socket.on("data", (chunk: Buffer) => {
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) waiting?.();
  });
  const roundTrip = () =>
    new Promise<void>((resolve) => {
      waiting = resolve;
      socket.write(command);
    });
  return async () => {
    for (let i = 0; i <= rounds; i++) await roundTrip();
    return rounds + 1;
  };
}

/**
 * The floor of a PostgreSQL round: `rounds + 1` bare parameterised queries (`SELECT $1::text`,
 * a 64-character value) through `pg` alone, one after another on a pool as the store's —
 * no store, no statement of ours. What a store operation costs above it is ours and the
 * server's work for our statement (a write, where this reads).
 */
export async function rawPostgresQueries(rounds: number): Promise<() => Promise<number>> {
  const { default: pg } = await import("pg");
  const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 10 });
  const value = "v".repeat(64);
  return async () => {
    for (let i = 0; i <= rounds; i++) await pool.query("SELECT $1::text AS v", [value]);
    return rounds + 1;
  };
}

/** Store operations per request of a whole call on `store` (the runtime's, counted). */
export async function storeOperationsPerRequest(rounds: number, store: "memory" | "redis" | "postgres"): Promise<number> {
  const s: Store =
    store === "memory"
      ? createMemoryStore()
      : store === "postgres"
        ? await createPostgresStore({ connectionString: POSTGRES_URL, schema: "mcp_yield_bench" })
        : await createRedisStore({ url: process.env.MCP_YIELD_TEST_REDIS_URL ?? "redis://127.0.0.1:6379", prefix: `mcp-yield-bench:${process.pid}:` });
  let operations = 0;
  const counted = new Proxy(s, {
    get: (target, p) => {
      const value = target[p as keyof Store];
      if (typeof value !== "function" || p === "close" || p === "time") return value;
      return (...args: unknown[]) => (operations++, (value as (...a: unknown[]) => unknown).apply(target, args));
    },
  }) as Store;
  const runtime = createRuntime({ state: { keys }, store: counted });
  await driveCall((p) => runtime.callTool(countGenerator, p, info), rounds); // warm: the first call also syncs the store clock
  operations = 0;
  const requests = await driveCall((p) => runtime.callTool(countGenerator, p, info), rounds);
  await runtime.close();
  await s.close();
  return operations / requests;
}

/**
 * The memory store as the README bounds it: 95 % of the rounds per second per MiB it states the
 * store holds, on a clock that advances with every request — a 1 MiB store reaches its steady
 * state (full of rounds still live, the oldest shrunk, expired ones leaving) in a bench process's
 * life. Filled first, through two state lifetimes, so what is measured is that steady state and
 * not how far a store happened to fill before the process ended (the earlier, unbounded variant
 * read 1.6× to 2.2× no store depending on how long its process ran). A refusal ends the bench.
 */
const MEMORY_STATED_ROUNDS_PER_SEC_PER_MIB = 1_000 / 64;
const MEMORY_BENCH_MIB = 1;

async function memoryAtSustainedRate(rounds: number, subject: typeof countGenerator = countGenerator): Promise<() => Promise<number>> {
  let now = Date.now();
  const clock = () => now;
  const store = createMemoryStore({ maxBytes: MEMORY_BENCH_MIB * 1024 * 1024, clock });
  const runtime = createRuntime({ state: { keys, clock }, clock, store });
  // Each call of R rounds redeems R states: the clock moves R round gaps per call, spread over its requests.
  const gapPerRequest = ((1000 / (0.95 * MEMORY_STATED_ROUNDS_PER_SEC_PER_MIB * MEMORY_BENCH_MIB)) * rounds) / (rounds + 1);
  const call: Call = (p) => {
    now += gapPerRequest;
    return runtime.callTool(subject, p, info);
  };
  for (const end = now + 2 * runtime.codec.ttlSeconds * 1000; now < end; ) await driveCall(call, rounds);
  if (store.shrunk === 0) throw new Error("the memory store never filled: the bench would not measure its steady state");
  return wholeCall(call, rounds);
}

/** (a) with a store: single-use states (each round redeemed, its response kept). */
export async function generatorOnStore(rounds: number, store: "memory" | "redis" | "postgres", subject: typeof countGenerator = countGenerator) {
  if (store === "memory") return memoryAtSustainedRate(rounds, subject);
  const s: Store =
    store === "redis"
      ? await createRedisStore({ url: process.env.MCP_YIELD_TEST_REDIS_URL ?? "redis://127.0.0.1:6379", prefix: `mcp-yield-bench:${process.pid}:` })
      : // One schema for every bench process (its tables made once; keys are per call, expiring).
        await createPostgresStore({ connectionString: process.env.MCP_YIELD_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test", schema: "mcp_yield_bench" });
  const runtime = createRuntime({ state: { keys }, store: s });
  return wholeCall((p) => runtime.callTool(subject, p, info), rounds);
}

/** (a) with a store and a step a round: each round claims its state and runs a step under the claim. */
export function generatorStepsOnStore(rounds: number, store: "memory" | "redis" | "postgres") {
  return generatorOnStore(rounds, store, countStepsGenerator);
}

/** (b) The same tool as a hand-written state machine on our codec, keeping `{ i, sum }`. */
export function handWritten(rounds: number) {
  return wholeCall(handWrittenCount(keys) as Call, rounds);
}

/** (b2) The hand-written state machine that keeps every answer. */
export function handWrittenAll(rounds: number) {
  return wholeCall(handWrittenAllCount(keys) as Call, rounds);
}

/** (f) The replay floor: (a)'s code replayed every round on answers carried as lines, with no runtime. */
export function replayFloor(rounds: number) {
  return wholeCall(replayFloorCount(keys) as Call, rounds);
}

/** (c) The same tool on the SDK's inputRequired() and createRequestStateCodec. */
export function sdk(rounds: number) {
  return wholeCall(sdkCount(secret) as Call, rounds);
}

/** A journal of `records` answers, as JSON: header and records (what the floors carry). */
export function journalOf(records: number) {
  return {
    r: records,
    c: "0f8b5c1e-7c1d-4f7e-9a55-3d2c1b0a9f8e",
    j: Array.from({ length: records }, (_, i) => [`eAbCdEfGhIjK`, `a{"n":${i}}`]),
    o: { [`elicit-${records}`]: "eAbCdEfGhIjK" },
  };
}
const binding = { method: "tools/call" as const, target: "count", arguments: { rounds: 3 } };

/** The HMAC floor: the same bytes as JSON, one native HMAC, base64url; open = HMAC again + parse. */
export function hmacFloor(records: number) {
  const data = journalOf(records);
  return () => {
    const payload = Buffer.from(JSON.stringify({ exp: 1, d: data })).toString("base64url");
    const token = `${payload}.${createHmac("sha256", secret).update(payload).digest("base64url")}`;
    const dot = token.indexOf(".");
    if (createHmac("sha256", secret).update(token.slice(0, dot)).digest("base64url") !== token.slice(dot + 1)) throw new Error("floor");
    return JSON.parse(Buffer.from(token.slice(0, dot), "base64url").toString());
  };
}

/** The AES-GCM floor: JSON, one native AES-256-GCM seal with a fresh IV, base64url; open = decrypt + parse. */
export function gcmFloor(records: number) {
  const data = journalOf(records);
  const iv = Buffer.alloc(12);
  return () => {
    randomFillSync(iv);
    const cipher = createCipheriv("aes-256-gcm", secret, iv);
    const body = Buffer.concat([iv, cipher.update(JSON.stringify({ exp: 1, d: data }), "utf8"), cipher.final(), cipher.getAuthTag()]);
    const token = body.toString("base64url");
    const raw = Buffer.from(token, "base64url");
    const decipher = createDecipheriv("aes-256-gcm", secret, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(raw.length - 16));
    return JSON.parse(Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]).toString());
  };
}

/**
 * Our codec as the runtime uses it: the arguments digest once per round, as the runtime's
 * admission makes it (by canonical text, its digests cached — until 2026-12-03 this variant
 * hashed the arguments every time, ≈ 1.3 µs of its 33.5 at 10 records, work no round does); the header sealed as
 * data and the journal as lines in the body (kept as text between rounds, so a seal does not
 * serialize it again); opened, the lines split back into records.
 */
export function ours(records: number, mode: "sealed" | "signed") {
  const codec = createStateCodec({ keys, mode });
  const { j, ...header } = journalOf(records);
  const body = j.map(([fp, value]) => `${fp}\t${value}\n`).join("");
  return () => {
    const b = { ...binding, argumentsDigest: argumentsDigest(binding.arguments) };
    const opened = codec.open(codec.seal({ binding: b, data: header, body }), b);
    const text = opened.body ?? "";
    const out: string[][] = [];
    for (let at = 0; at < text.length; ) {
      const end = text.indexOf("\n", at);
      const tab = text.indexOf("\t", at);
      out.push([text.slice(at, tab), text.slice(tab + 1, end)]);
      at = end + 1;
    }
    return out;
  };
}

/** The SDK's createRequestStateCodec: mint + verify. */
export function sdkCodec(records: number) {
  const codec = createRequestStateCodec({ key: secret });
  const data = journalOf(records);
  return async () => codec.verify(await codec.mint(data), {} as never);
}

/**
 * The realistic tool (bench/realistic-tools.ts), `inFlight` distinct calls at once, one request an
 * operation: (a) through the runtime (`liveCalls` `null`: the default, resuming; 0: replaying
 * every round, as on another instance).
 */
export function realistic(lines: number, liveCalls: number | null, inFlight: number) {
  const runtime = createRuntime({ state: { keys }, ...(liveCalls === null ? {} : { liveCalls }) });
  return interleaved((p) => runtime.callTool(realisticGenerator, p, info), lines, inFlight);
}

/** (b) for the realistic tool: the hand-written state machine, the same requests. */
export function realisticHandWritten(lines: number, inFlight: number) {
  return interleaved(handWrittenRealistic(keys), lines, inFlight);
}
