import { createRequestStateCodec } from "@modelcontextprotocol/server";
import { createRuntime, createStateCodec, type StateKey } from "mcp-yield";
import { accept, simulate } from "mcp-yield/testing";
import { bookFlight } from "../examples/tools/book-flight.js";
import { planTrip } from "../examples/tools/plan-trip.js";
import { compare, type Measured } from "./harness.js";
import { journalOf } from "./variants.js";

const secret = new Uint8Array(32).fill(42);
const keys: StateKey[] = [{ id: "bench", secret }];

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
  const rows: ReplayRow[] = [];
  for (const rounds of roundsList) {
    const [a, b, c] = await compare(
      [
        { name: "generator", factory: "generator", args: [rounds] },
        { name: "hand-written", factory: "handWritten", args: [rounds] },
        { name: "sdk", factory: "sdk", args: [rounds] },
      ],
      { batches: 9, batchMs: 200 },
    );
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
  const rows: CodecRow[] = [];
  for (const records of sizes) {
    const [f, e, s, k] = await compare([
      { name: "floor", factory: "floor", args: [records] },
      { name: "sealed", factory: "ours", args: [records, "sealed"] },
      { name: "signed", factory: "ours", args: [records, "signed"] },
      { name: "sdk", factory: "sdkCodec", args: [records] },
    ], { batches: 9, batchMs: 200 });
    const data = journalOf(records);
    const seal = (mode: "sealed" | "signed") => createStateCodec({ keys, mode }).seal({ binding: { method: "tools/call", target: "count", arguments: { rounds: 3 } }, data }).length;
    rows.push({
      records,
      tokenBytes: { sealed: seal("sealed"), signed: seal("signed"), sdk: (await createRequestStateCodec({ key: secret }).mint(data)).length },
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
