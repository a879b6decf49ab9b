import { createRequestStateCodec } from "@modelcontextprotocol/server";
import { createRuntime, createStateCodec, type StateKey } from "mcp-yield";
import { countGenerator, driveCall } from "./counting-tools.js";
import { cost, median, QUICK, ratio, repeated, wallCost } from "./harness.js";
import { journalOf, storeOperationsPerRequest } from "./variants.js";

const secret = new Uint8Array(32).fill(42);
const keys: StateKey[] = [{ id: "bench", secret }];

/** Server CPU for a whole call of R rounds (µs), six ways, and the ratios the targets name (and the floor's). */
export interface ReplayRow {
  rounds: number;
  us: { generatorLive: number; generatorStateless: number; handWritten: number; handWrittenAll: number; sdk: number; replayFloor: number };
  /** a/b on the live path (resuming), a/b and a/b2 fully stateless (replaying every round), a/c. */
  liveVsHandWritten: number;
  statelessVsHandWritten: number;
  statelessVsHandWrittenAll: number;
  liveVsSdk: number;
  /** f/b: the least a replaying design pays over (b); a/f stateless: what the runtime adds to that (runs of their own). */
  floorVsHandWritten: number;
  statelessVsFloor: number;
}

export async function replaySection(runs: number, roundsList = [1, 3, 10, 30]): Promise<ReplayRow[]> {
  const rows: ReplayRow[] = [];
  for (const rounds of roundsList) {
    const r = await repeated(
      runs,
      [
        { name: "a-live", factory: "generator", args: [rounds, null] },
        { name: "a-stateless", factory: "generator", args: [rounds, 0] },
        { name: "b", factory: "handWritten", args: [rounds] },
        { name: "b2", factory: "handWrittenAll", args: [rounds] },
        { name: "c", factory: "sdk", args: [rounds] },
      ],
      (s) => ({
        aLive: cost(s, "a-live"),
        aStateless: cost(s, "a-stateless"),
        b: cost(s, "b"),
        b2: cost(s, "b2"),
        c: cost(s, "c"),
        liveB: ratio(s, "a-live", "b"),
        statelessB: ratio(s, "a-stateless", "b"),
        statelessB2: ratio(s, "a-stateless", "b2"),
        liveC: ratio(s, "a-live", "c"),
      }),
    );
    // The floor in runs of its own (with the two it is compared to), so the targets' runs keep
    // the five variants they always had: how many processes alternate moves the ratios. A quick
    // run measures it only where a target names it (R = 30).
    const fl =
      QUICK && rounds !== 30
        ? { f: Number.NaN, floorB: Number.NaN, statelessF: Number.NaN }
        : await repeated(
            runs,
            [
              { name: "a-stateless", factory: "generator", args: [rounds, 0] },
              { name: "b", factory: "handWritten", args: [rounds] },
              { name: "f", factory: "replayFloor", args: [rounds] },
            ],
            (s) => ({ f: cost(s, "f"), floorB: ratio(s, "f", "b"), statelessF: ratio(s, "a-stateless", "f") }),
          );
    rows.push({
      rounds,
      us: { generatorLive: r.aLive / 1e3, generatorStateless: r.aStateless / 1e3, handWritten: r.b / 1e3, handWrittenAll: r.b2 / 1e3, sdk: r.c / 1e3, replayFloor: fl.f / 1e3 },
      liveVsHandWritten: r.liveB,
      statelessVsHandWritten: r.statelessB,
      statelessVsHandWrittenAll: r.statelessB2,
      liveVsSdk: r.liveC,
      floorVsHandWritten: fl.floorB,
      statelessVsFloor: fl.statelessF,
    });
  }
  return rows;
}

/**
 * What the runtime adds to the replay floor, split in two: a cost per request and a cost per
 * replayed ask. A whole call of R rounds makes R + 1 requests and replays 0 + 1 + … + R =
 * R(R + 1)/2 earlier asks, so (a) stateless − (f) at R is fitted as
 * `perRequest · (R + 1) + perReplayedAsk · R(R + 1)/2` (least squares, no intercept: a call of
 * no requests costs nothing). All of (a) and (f) at R = 1, 10 and 30 alternate in one set of
 * processes and the fit is made within each round of batches (paired, like every ratio here),
 * then the median over rounds and fresh runs — fitted across the replay rows' separate sets
 * instead, the figures moved with each set's level (a fit of one full run read −0.03 µs per ask).
 */
export interface Decomposition {
  perRequestUs: number;
  perReplayedAskUs: number;
  /** The largest gap between a measured (a) − (f) and the fit, µs per call (median over rounds). */
  worstResidualUs: number;
}

const FIT_ROUNDS = [1, 10, 30];

/** Least squares of y ≈ p·x1 + q·x2 over the points (no intercept), and the largest miss. */
export function fitTwo(points: Array<{ x1: number; x2: number; y: number }>): { p: number; q: number; worst: number } {
  const sum = (g: (pt: (typeof points)[number]) => number) => points.reduce((acc, pt) => acc + g(pt), 0);
  const [s11, s12, s22, s1y, s2y] = [sum((pt) => pt.x1 * pt.x1), sum((pt) => pt.x1 * pt.x2), sum((pt) => pt.x2 * pt.x2), sum((pt) => pt.x1 * pt.y), sum((pt) => pt.x2 * pt.y)];
  const det = s11 * s22 - s12 * s12;
  const p = (s1y * s22 - s2y * s12) / det;
  const q = (s2y * s11 - s1y * s12) / det;
  return { p, q, worst: Math.max(...points.map((pt) => Math.abs(pt.y - p * pt.x1 - q * pt.x2))) };
}

export async function decompositionSection(runs: number): Promise<Decomposition> {
  const variants = FIT_ROUNDS.flatMap((rounds) => [
    { name: `a${rounds}`, factory: "generator", args: [rounds, 0] },
    { name: `f${rounds}`, factory: "replayFloor", args: [rounds] },
  ]);
  const r = await repeated(runs, variants, (s) => {
    const fits = s.samples.map((row) =>
      fitTwo(
        FIT_ROUNDS.map((rounds) => ({
          x1: rounds + 1,
          x2: (rounds * (rounds + 1)) / 2,
          y: (row[s.names.indexOf(`a${rounds}`)]! - row[s.names.indexOf(`f${rounds}`)]!) / 1e3,
        })),
      ),
    );
    return { perRequestUs: median(fits.map((x) => x.p)), perReplayedAskUs: median(fits.map((x) => x.q)), worstResidualUs: median(fits.map((x) => x.worst)) };
  });
  return { perRequestUs: r.perRequestUs!, perReplayedAskUs: r.perReplayedAskUs!, worstResidualUs: r.worstResidualUs! };
}

/** Three instances without affinity (round-robin): server CPU per whole call (µs) and the ratios the targets name. */
export interface InstancesRow {
  rounds: number;
  us: { live: number; stateless: number; handWritten: number };
  /** a/b with the default `liveCalls` (each instance resumes what it holds), and with `liveCalls: 0`. */
  liveVsHandWritten: number;
  statelessVsHandWritten: number;
  /** The default against `liveCalls: 0` on the same three instances: must not be above 1. */
  liveVsStateless: number;
}

export async function instancesSection(runs: number, roundsList = [10, 30]): Promise<InstancesRow[]> {
  const rows: InstancesRow[] = [];
  for (const rounds of roundsList) {
    const r = await repeated(
      runs,
      [
        { name: "a3-live", factory: "generatorThreeInstances", args: [rounds, null] },
        { name: "a3-stateless", factory: "generatorThreeInstances", args: [rounds, 0] },
        { name: "b", factory: "handWritten", args: [rounds] },
      ],
      (s) => ({
        live: cost(s, "a3-live"),
        stateless: cost(s, "a3-stateless"),
        b: cost(s, "b"),
        liveB: ratio(s, "a3-live", "b"),
        statelessB: ratio(s, "a3-stateless", "b"),
        liveStateless: ratio(s, "a3-live", "a3-stateless"),
      }),
    );
    rows.push({
      rounds,
      us: { live: r.live / 1e3, stateless: r.stateless / 1e3, handWritten: r.b / 1e3 },
      liveVsHandWritten: r.liveB,
      statelessVsHandWritten: r.statelessB,
      liveVsStateless: r.liveStateless,
    });
  }
  return rows;
}

/** Seal + open of a journal of N records (µs) against two floors and the SDK's codec. */
export interface CodecRow {
  records: number;
  us: { hmacFloor: number; gcmFloor: number; signed: number; sealed: number; sdk: number };
  signedVsHmacFloor: number;
  sealedVsGcmFloor: number;
  sealedVsSdk: number;
  tokenBytes: { sealed: number; signed: number; sdk: number };
}

export async function codecSection(runs: number, sizes = [1, 10, 100]): Promise<CodecRow[]> {
  const rows: CodecRow[] = [];
  for (const records of sizes) {
    const r = await repeated(
      runs,
      [
        { name: "hmac", factory: "hmacFloor", args: [records] },
        { name: "gcm", factory: "gcmFloor", args: [records] },
        { name: "signed", factory: "ours", args: [records, "signed"] },
        { name: "sealed", factory: "ours", args: [records, "sealed"] },
        { name: "sdk", factory: "sdkCodec", args: [records] },
      ],
      (s) => ({
        hmac: cost(s, "hmac"),
        gcm: cost(s, "gcm"),
        signed: cost(s, "signed"),
        sealed: cost(s, "sealed"),
        sdk: cost(s, "sdk"),
        signedHmac: ratio(s, "signed", "hmac"),
        sealedGcm: ratio(s, "sealed", "gcm"),
        sealedSdk: ratio(s, "sealed", "sdk"),
      }),
    );
    const data = journalOf(records);
    const { j, ...header } = data;
    const body = j.map(([fp, value]) => `${fp}\t${value}\n`).join("");
    const seal = (mode: "sealed" | "signed") => createStateCodec({ keys, mode }).seal({ binding: { method: "tools/call", target: "count", arguments: { rounds: 3 } }, data: header, body }).length;
    rows.push({
      records,
      us: { hmacFloor: r.hmac / 1e3, gcmFloor: r.gcm / 1e3, signed: r.signed / 1e3, sealed: r.sealed / 1e3, sdk: r.sdk / 1e3 },
      signedVsHmacFloor: r.signedHmac,
      sealedVsGcmFloor: r.sealedGcm,
      sealedVsSdk: r.sealedSdk,
      tokenBytes: { sealed: seal("sealed"), signed: seal("signed"), sdk: (await createRequestStateCodec({ key: secret }).mint(data)).length },
    });
  }
  return rows;
}

/** Token bytes each small answer adds (the `count` tool's `{ action: "accept", content: { n } }`). */
export interface TokenRow {
  mode: "sealed" | "signed";
  bytesPerAnswer: number;
  /** The raw JSON of one such answer, for scale. */
  answerJsonBytes: number;
}

export async function tokenSection(): Promise<TokenRow[]> {
  const rows: TokenRow[] = [];
  for (const mode of ["sealed", "signed"] as const) {
    const runtime = createRuntime({ state: { keys, mode } });
    const sizes: number[] = [];
    await driveCall(async (p) => {
      const r = (await runtime.callTool(countGenerator, p, { clientCapabilities: { elicitation: {} } })) as { requestState?: string };
      if (r.requestState) sizes.push(r.requestState.length);
      return r;
    }, 30);
    rows.push({ mode, bytesPerAnswer: (sizes[29]! - sizes[9]!) / 20, answerJsonBytes: JSON.stringify({ action: "accept", content: { n: 1 } }).length });
  }
  return rows;
}

/** How a store row is named in the tables: the memory store is measured at its steady state (bench/variants.ts). */
export const storeLabel = (store: StoreRow["store"]): string =>
  store === "none" ? "none (no single use)" : store === "memory" ? "memory (1 MiB, steady state at 95 % of its stated sustained rate)" : store;

/**
 * Per round of a 3-ask call (µs): no store, the memory store, Redis, PostgreSQL — CPU of this
 * process, and wall time. Every row on the runtime's defaults, so on the live path (a round
 * resumes the generator held here): what a row adds to "none" is the store's single use.
 */
export interface StoreRow {
  store: "none" | "memory" | "redis" | "postgres";
  cpuUsPerRound: number;
  wallUsPerRound: number;
  vsNone: number;
}

/**
 * Redis against its floor, in the same run: the store's CPU per round (the Redis row less the
 * no-store row) over one bare-socket round trip's CPU (`rawRedisRoundTrips`), and the store
 * operations a request makes (counted, in this process).
 */
export interface RedisFloor {
  rawRoundTripCpuUs: number;
  storeCpuUsPerRound: number;
  vsRawRoundTrip: number;
  /** The same per store operation (a request makes `operationsPerRequest` of them, the bare socket one). */
  vsRawRoundTripPerOperation: number;
  operationsPerRequest: number;
}

/**
 * PostgreSQL against its floor, in the same run: the store's CPU and wall time per store
 * operation (the PostgreSQL row less the no-store row, over the operations a request makes)
 * over one bare parameterised query's through `pg` (`rawPostgresQueries`).
 */
export interface PostgresFloor {
  rawQueryCpuUs: number;
  rawQueryWallUs: number;
  operationsPerRequest: number;
  cpuVsRawQueryPerOperation: number;
  wallVsRawQueryPerOperation: number;
}

/** Calls a store variant over a connection runs before it may count as warm (see proc.ts `warm`); fewer in a quick run. */
const STORE_WARM_CALLS = QUICK ? 2000 : 8000;

export async function storeSection(runs: number, redis: boolean, postgres = false): Promise<{ rows: StoreRow[]; redis: RedisFloor | undefined; postgres: PostgresFloor | undefined }> {
  const rounds = 3;
  const variants = [
    { name: "none", factory: "generator", args: [rounds, null] },
    { name: "memory", factory: "generatorOnStore", args: [rounds, "memory"] },
    // A store over a connection warms by calls, not CPU (proc.ts): 8,000 calls before it counts.
    ...(redis
      ? [
          { name: "redis", factory: "generatorOnStore", args: [rounds, "redis"], warmOps: STORE_WARM_CALLS },
          { name: "rawRedis", factory: "rawRedisRoundTrips", args: [rounds], warmOps: STORE_WARM_CALLS },
        ]
      : []),
    ...(postgres
      ? [
          { name: "postgres", factory: "generatorOnStore", args: [rounds, "postgres"], warmOps: STORE_WARM_CALLS },
          { name: "rawPostgres", factory: "rawPostgresQueries", args: [rounds], warmOps: STORE_WARM_CALLS },
        ]
      : []),
  ];
  const operationsPerRequest = redis ? await storeOperationsPerRequest(rounds, "redis") : 0;
  const postgresOperationsPerRequest = postgres ? await storeOperationsPerRequest(rounds, "postgres") : 0;
  const r = await repeated(runs, variants, (s) =>
    Object.fromEntries([
      ...variants.flatMap((v) => [
        [`${v.name}Cpu`, cost(s, v.name)],
        [`${v.name}Wall`, wallCost(s, v.name)],
        [`${v.name}Ratio`, ratio(s, v.name, "none")],
      ]),
      // Paired within each fresh run: the Redis store's own CPU over a bare round trip's.
      ...(redis
        ? [
            ["redisVsRaw", (cost(s, "redis") - cost(s, "none")) / cost(s, "rawRedis")],
            ["redisVsRawPerOperation", (cost(s, "redis") - cost(s, "none")) / cost(s, "rawRedis") / operationsPerRequest],
          ]
        : []),
      ...(postgres
        ? [
            ["postgresVsRawPerOperation", (cost(s, "postgres") - cost(s, "none")) / cost(s, "rawPostgres") / postgresOperationsPerRequest],
            ["postgresWallVsRawPerOperation", (wallCost(s, "postgres") - wallCost(s, "none")) / wallCost(s, "rawPostgres") / postgresOperationsPerRequest],
          ]
        : []),
    ]),
  );
  const perRound = (ns: number) => ns / 1e3 / (rounds + 1);
  const rows = variants
    .filter((v) => v.name !== "rawRedis" && v.name !== "rawPostgres")
    .map((v) => ({ store: v.name as StoreRow["store"], cpuUsPerRound: perRound(r[`${v.name}Cpu`]!), wallUsPerRound: perRound(r[`${v.name}Wall`]!), vsNone: r[`${v.name}Ratio`]! }));
  const floor = redis
    ? {
        rawRoundTripCpuUs: perRound(r.rawRedisCpu!),
        storeCpuUsPerRound: perRound(r.redisCpu! - r.noneCpu!),
        vsRawRoundTrip: r.redisVsRaw!,
        vsRawRoundTripPerOperation: r.redisVsRawPerOperation!,
        operationsPerRequest,
      }
    : undefined;
  const postgresFloor = postgres
    ? {
        rawQueryCpuUs: perRound(r.rawPostgresCpu!),
        rawQueryWallUs: perRound(r.rawPostgresWall!),
        operationsPerRequest: postgresOperationsPerRequest,
        cpuVsRawQueryPerOperation: r.postgresVsRawPerOperation!,
        wallVsRawQueryPerOperation: r.postgresWallVsRawPerOperation!,
      }
    : undefined;
  return { rows, redis: floor, postgres: postgresFloor };
}
