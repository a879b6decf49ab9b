import { createHmac } from "node:crypto";
import { createRequestStateCodec } from "@modelcontextprotocol/server";
import { createRuntime, createStateCodec, digestOf, type StateKey } from "mcp-yield";
import { accept, simulate } from "mcp-yield/testing";
import { bookFlight } from "../examples/tools/book-flight.js";
import { planTrip } from "../examples/tools/plan-trip.js";
import { compare, type Measured } from "./harness.js";
import { countGenerator, driveCall, handWrittenCount, sdkCount } from "./counting-tools.js";

const secret = new Uint8Array(32).fill(42);
const keys: StateKey[] = [{ id: "bench", secret }];
const info = { clientCapabilities: { elicitation: {} } };

export interface ReplayRow {
  rounds: number;
  generatorUs: number;
  handWrittenUs: number;
  sdkUs: number;
  /** a/b and a/c for the whole call. */
  vsHandWritten: number;
  vsSdk: number;
}

/** 1. Replay: server CPU for a whole call of R rounds, three ways. */
export async function replaySection(roundsList = [1, 3, 10, 30]): Promise<ReplayRow[]> {
  const runtime = createRuntime({ state: { keys } });
  const generator = (p: Parameters<typeof runtime.callTool>[1]) => runtime.callTool(countGenerator, p, info);
  const hand = handWrittenCount(keys);
  const sdk = sdkCount(secret);
  const rows: ReplayRow[] = [];
  for (const rounds of roundsList) {
    // Sanity: all three really take R + 1 requests (R asks, then the completing retry).
    for (const f of [generator, hand, sdk]) if ((await driveCall(f as never, rounds)) !== rounds + 1) throw new Error("variant took the wrong number of rounds");
    const [a, b, c] = await compare([
      { name: "generator", run: () => driveCall(generator as never, rounds) },
      { name: "hand-written", run: () => driveCall(hand as never, rounds) },
      { name: "sdk", run: () => driveCall(sdk as never, rounds) },
    ], { batches: rounds >= 10 ? 11 : 15, batchMs: 25 });
    rows.push({ rounds, generatorUs: a!.nsPerOp / 1e3, handWrittenUs: b!.nsPerOp / 1e3, sdkUs: c!.nsPerOp / 1e3, vsHandWritten: a!.nsPerOp / b!.nsPerOp, vsSdk: a!.nsPerOp / c!.nsPerOp });
  }
  return rows;
}

export interface CodecRow {
  records: number;
  tokenBytes: { sealed: number; signed: number; sdk: number };
  us: { floor: number; sealed: number; signed: number; sdk: number };
  sealedVsFloor: number;
  signedVsFloor: number;
  sealedVsSdk: number;
}

/** 2. Codec: seal + open of a journal of N records against the floor and the SDK's codec. */
export async function codecSection(sizes = [1, 10, 100]): Promise<CodecRow[]> {
  const now = () => 1_700_000_000_000;
  const sealed = createStateCodec({ keys, clock: now });
  const signed = createStateCodec({ keys, mode: "signed", clock: now });
  const sdk = createRequestStateCodec({ key: secret });
  const binding = { method: "tools/call" as const, target: "count", arguments: { rounds: 3 } };
  const rows: CodecRow[] = [];
  for (const records of sizes) {
    const data = {
      r: records,
      c: "0f8b5c1e-7c1d-4f7e-9a55-3d2c1b0a9f8e",
      j: Array.from({ length: records }, (_, i) => [`elicit:elicit-${i}:AbCdEfGhIjKlMnOp`, { action: "accept", content: { n: i } }]),
      o: { [`elicit-${records}`]: "elicit:elicit-x:AbCdEfGhIjKlMnOp" },
    };
    // The floor: the same bytes as JSON, one native HMAC, base64url; verify = HMAC again + parse.
    const floor = () => {
      const payload = Buffer.from(JSON.stringify({ exp: 1, d: data })).toString("base64url");
      const tag = createHmac("sha256", secret).update(payload).digest("base64url");
      const token = `${payload}.${tag}`;
      const dot = token.indexOf(".");
      if (createHmac("sha256", secret).update(token.slice(0, dot)).digest("base64url") !== token.slice(dot + 1)) throw new Error("floor");
      return JSON.parse(Buffer.from(token.slice(0, dot), "base64url").toString());
    };
    // As the runtime uses it: the arguments digest is computed once per round for seal and open.
    const ours = (codec: typeof sealed) => () => {
      const b = { ...binding, argumentsDigest: digestOf(binding.arguments) };
      return codec.open(codec.seal({ binding: b, data }), b);
    };
    const theirs = async () => sdk.verify(await sdk.mint(data), {} as never);
    const [f, e, s, k] = await compare([
      { name: "floor", run: floor },
      { name: "sealed", run: ours(sealed) },
      { name: "signed", run: ours(signed) },
      { name: "sdk", run: theirs },
    ]);
    rows.push({
      records,
      tokenBytes: { sealed: sealed.seal({ binding, data }).length, signed: signed.seal({ binding, data }).length, sdk: (await sdk.mint(data)).length },
      us: { floor: f!.nsPerOp / 1e3, sealed: e!.nsPerOp / 1e3, signed: s!.nsPerOp / 1e3, sdk: k!.nsPerOp / 1e3 },
      sealedVsFloor: e!.nsPerOp / f!.nsPerOp,
      signedVsFloor: s!.nsPerOp / f!.nsPerOp,
      sealedVsSdk: e!.nsPerOp / k!.nsPerOp,
    });
  }
  return rows;
}

export interface SizeRow {
  tool: string;
  round: number;
  stateBytes: number;
  /** JSON of the answers recorded so far (what the journal must at least carry). */
  answersJsonBytes: number;
}

/** 3. State size per round for typical answers. */
export async function sizeSection(): Promise<SizeRow[]> {
  const runtime = createRuntime({ state: { keys } });
  const rows: SizeRow[] = [];
  const planAnswers = { name: accept({ name: "Ada Lovelace" }), destination: accept({ destination: "Kyoto" }), confirm: accept({ confirm: true }) };
  const flights = { confirm: accept({ confirm: true }) };
  for (const [def, input, answers] of [[planTrip, {}, planAnswers], [bookFlight, { destination: "Lisbon" }, flights]] as const) {
    const sim = await simulate(def, input, answers, { runtime });
    const given: unknown[] = [];
    sim.rounds.forEach((r, i) => {
      rows.push({ tool: def.name, round: r.round, stateBytes: r.stateBytes, answersJsonBytes: JSON.stringify(given).length });
      given.push(...Object.keys(r.inputRequests).map((k) => (answers as Record<string, unknown>)[k]));
      void i;
    });
  }
  return rows;
}

export type { Measured };
