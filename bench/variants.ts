import { createHmac } from "node:crypto";
import { createRequestStateCodec } from "@modelcontextprotocol/server";
import { createRuntime, createStateCodec, digestOf, type StateKey } from "mcp-yield";
import { countGenerator, driveCall, handWrittenCount, sdkCount } from "./counting-tools.js";

/**
 * The benchmark's variants, as factories the worker threads call by name. Each returns one
 * operation: a whole call of R rounds (replay section), or one seal + open (codec section).
 */

const secret = new Uint8Array(32).fill(42);
const keys: StateKey[] = [{ id: "bench", secret }];
const info = { clientCapabilities: { elicitation: {} } };

type Call = Parameters<typeof driveCall>[0];

async function wholeCall(call: Call, rounds: number): Promise<() => Promise<number>> {
  // Sanity: the variant really takes R + 1 requests (R asks, then the completing retry).
  if ((await driveCall(call, rounds)) !== rounds + 1) throw new Error("variant took the wrong number of rounds");
  return () => driveCall(call, rounds);
}

/** (a) The generator through the runtime. */
export function generator(rounds: number) {
  const runtime = createRuntime({ state: { keys } });
  return wholeCall((p) => runtime.callTool(countGenerator, p, info), rounds);
}

/** (b) The same tool as a hand-written state machine on our codec. */
export function handWritten(rounds: number) {
  return wholeCall(handWrittenCount(keys) as Call, rounds);
}

/** (c) The same tool on the SDK's inputRequired() and createRequestStateCodec. */
export function sdk(rounds: number) {
  return wholeCall(sdkCount(secret) as Call, rounds);
}

/** A journal of `records` answers, shaped like the runtime's. */
export function journalOf(records: number) {
  return {
    r: records,
    c: "0f8b5c1e-7c1d-4f7e-9a55-3d2c1b0a9f8e",
    j: Array.from({ length: records }, (_, i) => [`elicit:elicit-${i}:AbCdEfGhIjKl`, { action: "accept", content: { n: i } }]),
    o: { [`elicit-${records}`]: "elicit:elicit-x:AbCdEfGhIjKl" },
  };
}
const binding = { method: "tools/call" as const, target: "count", arguments: { rounds: 3 } };

/** The floor: the same bytes as JSON, one native HMAC, base64url; verify = HMAC again + parse. */
export function floor(records: number) {
  const data = journalOf(records);
  return () => {
    const payload = Buffer.from(JSON.stringify({ exp: 1, d: data })).toString("base64url");
    const tag = createHmac("sha256", secret).update(payload).digest("base64url");
    const token = `${payload}.${tag}`;
    const dot = token.indexOf(".");
    if (createHmac("sha256", secret).update(token.slice(0, dot)).digest("base64url") !== token.slice(dot + 1)) throw new Error("floor");
    return JSON.parse(Buffer.from(token.slice(0, dot), "base64url").toString());
  };
}

/** Our codec as the runtime uses it: the arguments digest once per round, then seal + open. */
export function ours(records: number, mode: "sealed" | "signed") {
  const codec = createStateCodec({ keys, mode });
  const data = journalOf(records);
  return () => {
    const b = { ...binding, argumentsDigest: digestOf(binding.arguments) };
    return codec.open(codec.seal({ binding: b, data }), b);
  };
}

/** The SDK's createRequestStateCodec: mint + verify. */
export function sdkCodec(records: number) {
  const codec = createRequestStateCodec({ key: secret });
  const data = journalOf(records);
  return async () => codec.verify(await codec.mint(data), {} as never);
}
