import fc from "fast-check";
import { createStateCodec, type Runtime, type StateKey } from "mcp-yield";
import { getPromptResult, inputRequiredResult, callToolResult } from "mcp-yield/wire";
import { createApp } from "../../examples/app.js";

/**
 * Hostile wire traffic against the example app's web-standard handler (the SDK's
 * createMcpHandler with our tools, minus only node:http): generated inputResponses and
 * generated or stolen states, for every example tool. Every response must be a schema-valid
 * result or a JSON-RPC error carrying the request id — and no answer may reach an ask it was
 * not given for.
 */

export interface HostileReport {
  requests: number;
  results: number;
  rpcErrors: number;
  /** Responses that were neither: 5xx, wrong id, invalid result, not JSON, or a hang. */
  bad: Array<{ case: string; detail: string }>;
  /** A complete result that used an answer it should not have. */
  misdelivered: Array<{ case: string; detail: string }>;
  byCase: Record<string, number>;
}

const META = (caps: Record<string, unknown>) => ({
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "hostile", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": caps,
});
const ALL_CAPS = { elicitation: {}, sampling: {}, roots: {} };

interface Target {
  method: "tools/call" | "prompts/get";
  name: string;
  args: Record<string, unknown>;
  keys: string[];
}
const TARGETS: Target[] = [
  { method: "tools/call", name: "book_flight", args: { destination: "Lisbon" }, keys: ["confirm"] },
  { method: "tools/call", name: "plan_trip", args: {}, keys: ["name", "destination", "confirm"] },
  { method: "tools/call", name: "workspace_summary", args: {}, keys: ["roots", "summary"] },
  { method: "tools/call", name: "test_input_required_result_elicitation", args: {}, keys: ["user_name"] },
  { method: "tools/call", name: "test_input_required_result_multiple_inputs", args: {}, keys: ["user_name", "greeting", "client_roots"] },
  { method: "tools/call", name: "test_input_required_result_multi_round", args: {}, keys: ["step1", "step2"] },
  { method: "prompts/get", name: "test_input_required_result_prompt", args: {}, keys: ["user_context"] },
];

/** Values a hostile client might put where an answer belongs. */
function hostileAnswer(): fc.Arbitrary<unknown> {
  const deep = fc.integer({ min: 20, max: 3000 }).map((n) => {
    let v: unknown = { action: "accept", content: { confirm: true } };
    for (let i = 0; i < n; i++) v = { nested: v };
    return v;
  });
  return fc.oneof(
    fc.anything(),
    fc.constantFrom(null, [], {}, "accept", 0, true, [{ action: "accept" }]),
    fc.record({ action: fc.constantFrom("accept", "decline", "cancel", "ACCEPT", ""), content: fc.anything() }, { requiredKeys: ["action"] }),
    fc.record({
      action: fc.constant("accept"),
      content: fc.dictionary(fc.constantFrom("confirm", "name", "destination", "color", "context", "__proto__", "constructor"), fc.oneof(fc.boolean(), fc.string(), fc.integer(), fc.constant(null))),
    }),
    fc.constant("x".repeat(200_000)).map((s) => ({ action: "accept", content: { name: s } })),
    fc.record({ role: fc.constantFrom("assistant", "user", "system"), content: fc.anything(), model: fc.oneof(fc.string(), fc.integer()) }),
    fc.record({ roots: fc.oneof(fc.array(fc.record({ uri: fc.oneof(fc.constant("file:///x"), fc.webUrl(), fc.integer()) })), fc.anything()) }),
    deep,
  );
}

/** `inputResponses` objects, including prototype-shaped keys (sent as raw JSON text). */
function hostileResponses(keys: string[]): fc.Arbitrary<string> {
  const key = fc.oneof(fc.constantFrom(...keys), fc.constantFrom("__proto__", "constructor", "prototype", "toString", ""), fc.string({ maxLength: 12 }));
  const entries = fc.array(fc.tuple(key, hostileAnswer()), { maxLength: 6 });
  return fc.oneof(
    entries.map((es) => `{${es.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v) ?? "null"}`).join(",")}}`),
    fc.constantFrom("null", "[]", '"answers"', "42", '[{"action":"accept"}]', '{"__proto__":{"confirm":{"action":"accept","content":{"confirm":true}}}}'),
  );
}

type StateKind = "none" | "legit" | "replayed" | "tampered" | "foreign" | "expired" | "oversized" | "other_tool" | "other_principal" | "other_args" | "garbage";

export async function runHostile(options: { runtime: Runtime; keys: StateKey[]; runs: number; seed?: number; timeoutMs?: number }): Promise<HostileReport> {
  const app = createApp(options.runtime);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const report: HostileReport = { requests: 0, results: 0, rpcErrors: 0, bad: [], misdelivered: [], byCase: {} };
  const foreign = createStateCodec({ keys: [{ id: options.keys[0]!.id, secret: new Uint8Array(32).fill(0xee) }] });
  const past = createStateCodec({ keys: options.keys, clock: () => Date.now() - 3_600_000 });
  let nextId = 1;

  async function send(t: Target, body: string, id: number, principal: string | undefined, label: string): Promise<{ result?: Record<string, unknown>; error?: unknown } | undefined> {
    report.requests++;
    report.byCase[label] = (report.byCase[label] ?? 0) + 1;
    const request = new Request("http://127.0.0.1/mcp", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28", "mcp-method": t.method, "mcp-name": t.name },
      body,
    });
    let timer: NodeJS.Timeout | undefined;
    const hang = new Promise<"hang">((resolve) => (timer = setTimeout(() => resolve("hang"), timeoutMs)));
    const response = await Promise.race([app.fetch(request, principal ? { authInfo: { token: "t", clientId: principal, scopes: [] } } : {}), hang]).finally(() => clearTimeout(timer));
    if (response === "hang") {
      report.bad.push({ case: label, detail: `no response within ${timeoutMs} ms` });
      return undefined;
    }
    const text = await response.text();
    // A 4xx is fine when it carries a JSON-RPC error for this id (checked below); a 5xx never is.
    if (response.status >= 500) {
      report.bad.push({ case: label, detail: `HTTP ${response.status}: ${text.slice(0, 200)}` });
      return undefined;
    }
    let message: { id?: unknown; result?: Record<string, unknown>; error?: { code?: unknown; message?: unknown } };
    try {
      const data =
        text.startsWith("event:") || text.startsWith("data:")
          ? text
              .split("\n")
              .find((l) => l.startsWith("data:"))!
              .slice(5)
          : text;
      message = JSON.parse(data);
    } catch {
      report.bad.push({ case: label, detail: `not JSON: ${text.slice(0, 200)}` });
      return undefined;
    }
    if (message.id !== id) {
      report.bad.push({ case: label, detail: `response id ${JSON.stringify(message.id)} for request ${id}` });
      return undefined;
    }
    if (message.error) {
      if (typeof message.error.code !== "number" || typeof message.error.message !== "string") report.bad.push({ case: label, detail: `malformed error ${JSON.stringify(message.error)}` });
      else report.rpcErrors++;
      return message;
    }
    const result = message.result ?? {};
    const valid =
      result.resultType === "input_required"
        ? inputRequiredResult.safeParse(result).success
        : (JSON.parse(body) as { method: string }).method === "prompts/get"
          ? getPromptResult.safeParse(result).success
          : callToolResult.safeParse(result).success;
    if (!valid) report.bad.push({ case: label, detail: `invalid result ${JSON.stringify(result).slice(0, 300)}` });
    else report.results++;
    return message;
  }

  const params = (t: Target, extra: string) => {
    const base = t.method === "tools/call" ? `"name":${JSON.stringify(t.name)},"arguments":${JSON.stringify(t.args)}` : `"name":${JSON.stringify(t.name)},"arguments":{}`;
    return `{${base},"_meta":${JSON.stringify(META(ALL_CAPS))}${extra}}`;
  };
  const body = (t: Target, id: number, extra: string) => `{"jsonrpc":"2.0","id":${id},"method":"${t.method}","params":${params(t, extra)}}`;

  /** A legitimate first-round state for `t` (and the principal it is bound to). */
  async function firstState(t: Target, principal: string | undefined): Promise<string | undefined> {
    const id = nextId++;
    const m = await send(t, body(t, id, ""), id, principal, "legit_first_round");
    return (m?.result as { requestState?: string } | undefined)?.requestState;
  }

  const arb = fc.record({
    target: fc.constantFrom(...TARGETS),
    state: fc.constantFrom<StateKind>("none", "legit", "replayed", "tampered", "foreign", "expired", "oversized", "other_tool", "other_principal", "other_args", "garbage"),
    responses: fc.option(fc.integer({ min: 0, max: 1 << 30 }), { nil: undefined }),
    principal: fc.constantFrom(undefined, "alice", "bob"),
  });
  const cases = fc.sample(arb, { numRuns: options.runs, seed: options.seed ?? 2322 });
  const responsesPool = fc.sample(hostileResponses(["confirm", "name", "destination", "roots", "summary", "user_name", "greeting", "client_roots", "step1", "step2", "user_context"]), {
    numRuns: 97,
    seed: (options.seed ?? 2322) + 1,
  });

  // Targeted cases first: prototype-shaped keys around a valid answer must never book, and a
  // plain valid answer must (the positive control that proves the misdelivery check can fire).
  const book = TARGETS[0]!;
  const valid = `{"action":"accept","content":{"confirm":true}}`;
  let controlBooked = 0;
  // The second one looks like a bare elicitation result itself, so the SDK keeps it (and, by
  // copying with plain assignment, makes it the prototype of its inputResponses object).
  for (const responses of [
    `{"__proto__":{"confirm":${valid}}}`,
    `{"__proto__":{"action":"decline","confirm":${valid}}}`,
    `{"constructor":${valid}}`,
    `{"prototype":${valid}}`,
    `[${valid}]`,
    `{"Confirm":${valid}}`,
    `{"confirm":${valid}}`,
  ]) {
    for (const principal of [undefined, "alice"]) {
      const state = await firstState(book, principal);
      const id = nextId++;
      const m = await send(book, body(book, id, `,"requestState":${JSON.stringify(state)},"inputResponses":${responses}`), id, principal, "targeted");
      const r = m?.result as { resultType?: string; isError?: boolean; content?: Array<{ text?: string }> } | undefined;
      const booked = r?.resultType === "complete" && !r.isError && String(r.content?.[0]?.text).startsWith("Booked");
      if (responses === `{"confirm":${valid}}`) controlBooked += booked ? 1 : 0;
      else if (booked) report.misdelivered.push({ case: "targeted", detail: `booked with inputResponses ${responses}` });
    }
  }
  if (controlBooked !== 2) report.bad.push({ case: "targeted", detail: "a valid confirm answer did not book: the misdelivery check cannot be trusted" });

  for (const c of cases) {
    const t = c.target;
    let state: string | undefined;
    switch (c.state) {
      case "none":
        break;
      case "legit":
      case "replayed":
      case "tampered":
      case "other_args":
      case "other_principal":
        state = await firstState(t, c.principal);
        break;
      case "foreign":
        state = foreign.seal({ binding: { method: t.method, target: t.name, arguments: t.args }, data: { r: 0, c: "x", j: [], o: {} } });
        break;
      case "expired":
        state = past.seal({ binding: { method: t.method, target: t.name, arguments: t.args, ...(c.principal ? { principal: c.principal } : {}) }, data: { r: 0, c: "x", j: [], o: {} } });
        break;
      case "oversized":
        state = `y1e.${options.keys[0]!.id}.${"A".repeat(70_000)}`;
        break;
      case "other_tool": {
        const other = TARGETS[(TARGETS.indexOf(t) + 1) % TARGETS.length]!;
        state = await firstState(other, c.principal);
        break;
      }
      case "garbage":
        state = "eyJub3QiOiJvdXJzIn0";
        break;
    }
    if (c.state === "tampered" && state) state = state.slice(0, -3) + (state.endsWith("AAA") ? "BBB" : "AAA");
    const responses = c.responses === undefined ? undefined : responsesPool[c.responses % responsesPool.length]!;
    const extra = `${state !== undefined ? `,"requestState":${JSON.stringify(state)}` : ""}${responses !== undefined ? `,"inputResponses":${responses}` : ""}`;
    const id = nextId++;
    const principal = c.state === "other_principal" ? (c.principal === "alice" ? "bob" : "alice") : c.principal;
    const effective = c.state === "other_args" ? { ...t, args: { ...t.args, extra: "changed" } } : t;
    const label = `${c.state}${responses !== undefined ? "+answers" : ""}`;
    const message = await send(effective, body(effective, id, extra), id, principal, label);
    if (c.state === "replayed" && state) await send(t, body(t, nextId, extra), nextId++, principal, "replayed_again");
    // Misdelivery: book_flight may only book on a valid confirm answer under "confirm".
    const result = message?.result as { isError?: boolean; content?: Array<{ text?: string }>; resultType?: string } | undefined;
    if (t.name === "book_flight" && result?.resultType === "complete" && !result.isError && String(result.content?.[0]?.text).startsWith("Booked")) {
      const parsed = responses ? (JSON.parse(responses) as unknown) : undefined;
      const own = parsed && typeof parsed === "object" && !Array.isArray(parsed) && Object.hasOwn(parsed, "confirm") ? (parsed as Record<string, unknown>).confirm : undefined;
      const ok = typeof own === "object" && own !== null && (own as { action?: unknown }).action === "accept" && (own as { content?: { confirm?: unknown } }).content?.confirm === true;
      if (!ok) report.misdelivered.push({ case: label, detail: `booked with inputResponses ${responses?.slice(0, 200)}` });
    }
  }
  await app.close();
  return report;
}
