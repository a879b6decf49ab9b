import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import {
  all,
  createRuntime,
  type ElicitOutcome,
  ElicitationSchemaError,
  elicit,
  elicitUrl,
  form,
  listRoots,
  now,
  ProtocolError,
  prompt,
  resource,
  type Root,
  sample,
  step,
  tool,
  toolError,
  uuid,
} from "mcp-yield";
import { isEffect } from "../../src/internal.js";
import { accept, decline, roots, sampled, simulate } from "mcp-yield/testing";
import { tamperedEnd } from "../support/tamper.js";
import { EFFECT_KINDS, isEffectKind } from "../../src/authoring/effect-kinds.js";
import { testKey } from "../support/keys.js";
import { textOf } from "../support/results.js";

const Name = z.object({ name: z.string().min(1) });
const Num = z.object({ n: z.number().int() });
const key = testKey("t", 5);
const everything = { elicitation: {}, sampling: {}, roots: {} };

async function expectProtocolError(p: Promise<unknown>, code: number, reason?: string): Promise<ProtocolError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProtocolError);
  const pe = error as ProtocolError;
  expect(pe.code).toBe(code);
  if (reason !== undefined) expect(pe.data?.reason).toBe(reason);
  return pe;
}

describe("replay", () => {
  it("runs a step once across 5 rounds, with the state sealed and opened every round", async () => {
    let runs = 0;
    const counter = tool({
      name: "counter",
      description: "asks five times",
      input: z.object({}),
      *run() {
        const base = yield* step("base", () => {
          runs++;
          return { at: new Date(1_000), n: 10n };
        });
        let total = 0;
        for (let i = 0; i < 5; i++) {
          const a = yield* elicit(`number ${i}?`, Num);
          if (a.action === "accept") total += a.content.n;
        }
        return `${base.at.toISOString()} ${base.n + BigInt(total)}`;
      },
    });
    const sim = await simulate(counter, {}, (_req, _key, round) => accept({ n: round }));
    expect(runs).toBe(1);
    expect(sim.rounds).toHaveLength(5);
    expect(textOf(sim.result)).toBe("1970-01-01T00:00:01.000Z 25");
    // Each round's state differs and grows with the journal.
    expect(sim.stateBytes.every((b, i) => i === 0 || b > sim.stateBytes[i - 1]!)).toBe(true);
  });

  it("a 10-round loop with conditional asks", async () => {
    const loop = tool({
      name: "loop",
      description: "keeps asking until the sum passes 40; asks for a name on odd totals",
      input: z.object({ limit: z.number() }),
      *run({ limit }) {
        let sum = 0;
        const names: string[] = [];
        while (sum <= limit) {
          const a = yield* elicit(`sum is ${sum}; add?`, Num);
          if (a.action !== "accept") return toolError("stopped");
          sum += a.content.n;
          if (sum % 2 === 1) {
            const who = yield* elicit("odd! who?", Name);
            if (who.action === "accept") names.push(who.content.name);
          }
        }
        return `${sum} ${names.join(",")}`;
      },
    });
    const sim = await simulate(loop, { limit: 40 }, (req) => ((req.params as { message: string }).message.startsWith("odd") ? accept({ name: "x" }) : accept({ n: 5 })));
    // 9 additions to pass 40, 5 odd totals (5, 15, 25, 35, 45) → 14 asks, 14 rounds.
    expect(textOf(sim.result)).toBe("45 x,x,x,x,x");
    expect(sim.rounds).toHaveLength(14);
    expect(sim.rounds.every((r) => Object.keys(r.inputRequests).length === 1)).toBe(true);
  });

  it("now() and uuid() are recorded: every replay sees the first round's values", async () => {
    // liveCalls: 0 forces a replay every round, as when each round lands on another instance.
    const replaying = createRuntime({ state: { keys: [key] }, liveCalls: 0 });
    const seen: Array<[number, string]> = [];
    const t = tool({
      name: "clock",
      description: "",
      input: z.object({}),
      *run() {
        const at = yield* now();
        const id = yield* uuid();
        seen.push([at, id]);
        yield* elicit("a", Name);
        yield* elicit("b", Name);
        return `${at} ${id}`;
      },
    });
    const sim = await simulate(t, {}, () => accept({ name: "n" }), { runtime: replaying });
    expect(seen).toHaveLength(3);
    expect(new Set(seen.map((s) => s.join()))).toHaveLength(1);
    expect(textOf(sim.result)).toBe(seen[0]!.join(" "));
  });

  it("an async generator awaiting between asks", async () => {
    const t = tool({
      name: "async",
      description: "",
      input: z.object({}),
      async *run() {
        await new Promise((r) => setTimeout(r, 1));
        const a = yield* elicit("first", Name);
        const upper = await Promise.resolve(a.action === "accept" ? a.content.name.toUpperCase() : "-");
        const s = yield* step("slow", async () => {
          await new Promise((r) => setTimeout(r, 1));
          return upper + "!";
        });
        const b = yield* sample({ messages: [{ role: "user", content: { type: "text", text: s } }], maxTokens: 5 });
        return `${s} ${b.model}`;
      },
    });
    const sim = await simulate(t, {}, (req) => (req.method === "elicitation/create" ? accept({ name: "ada" }) : sampled("ok", "m1")));
    expect(textOf(sim.result)).toBe("ADA! m1");
  });
});

describe("all()", () => {
  const both = tool({
    name: "both",
    description: "",
    input: z.object({}),
    *run() {
      const [who, rs, s] = yield* all([elicit("who?", Name, { key: "who" }), listRoots({ key: "roots" }), sample({ messages: [], maxTokens: 9 }, { key: "s" })]);
      return `${who.action === "accept" ? who.content.name : who.action} ${rs.map((r) => r.uri).join()} ${s.model}`;
    },
  });

  it("asks everything in one round", async () => {
    const sim = await simulate(both, {}, { who: accept({ name: "ada" }), roots: roots("file:///w"), s: sampled("x", "m") });
    expect(sim.rounds).toHaveLength(1);
    expect(Object.keys(sim.rounds[0]!.inputRequests).sort()).toEqual(["roots", "s", "who"]);
    expect(textOf(sim.result)).toBe("ada file:///w m");
  });

  it("keeps answers that arrived and asks again only for the missing or invalid ones", async () => {
    let whoAnswers = 0;
    const sim = await simulate(
      both,
      {},
      {
        who: () => (++whoAnswers === 1 ? accept({ name: "" }) : decline()), // invalid first, then decline
        roots: [roots("file:///a"), roots("file:///SHOULD-NOT-BE-ASKED")],
        s: [() => ({ nope: 1 }), () => ({ nope: 2 }), sampled("x", "m2")],
      },
    );
    expect(sim.rounds.map((r) => Object.keys(r.inputRequests).sort())).toEqual([["roots", "s", "who"], ["s", "who"], ["s"]]);
    expect(textOf(sim.result)).toBe("decline file:///a m2");
  });

  it("object form returns members by name", async () => {
    const t = tool({
      name: "obj",
      description: "",
      input: z.object({}),
      *run() {
        const r = yield* all({ a: elicit("a", Name), b: elicit("b", Num) });
        expectTypeOf(r.a).toEqualTypeOf<ElicitOutcome<{ name: string }>>();
        return `${r.a.action}/${r.b.action === "accept" ? r.b.content.n : 0}`;
      },
    });
    const sim = await simulate(t, {}, (req) => ((req.params as { message: string }).message === "a" ? decline() : accept({ n: 3 })));
    expect(Object.keys(sim.rounds[0]!.inputRequests)).toEqual(["all-0.a", "all-0.b"]);
    expect(textOf(sim.result)).toBe("decline/3");
  });
});

describe("the wire round by round", () => {
  const runtime = createRuntime({ state: { keys: [key] } });
  const ask = tool({
    name: "ask",
    description: "",
    input: z.object({ x: z.number().optional() }),
    *run() {
      const a = yield* elicit("name?", Name, { key: "user_name" });
      return a.action === "accept" ? `hello ${a.content.name}` : a.action;
    },
  });
  const info = { clientCapabilities: everything };

  it("a first call's answers reach no ask unless the ask opts in with acceptUnasked", async () => {
    // Nobody was shown the question: the pre-supplied answer is ignored and the question asked.
    const r = await runtime.callTool(ask, { name: "ask", arguments: {}, inputResponses: { user_name: accept({ name: "pre" }) } }, info);
    expect(r.resultType).toBe("input_required");
    expect(Object.keys((r as { inputRequests: object }).inputRequests)).toEqual(["user_name"]);
    const open = tool({
      name: "open",
      description: "",
      input: z.object({}),
      *run() {
        const a = yield* elicit("name?", Name, { key: "user_name", acceptUnasked: true });
        return a.action === "accept" ? `hello ${a.content.name}` : a.action;
      },
    });
    const pre = await runtime.callTool(open, { name: "open", arguments: {}, inputResponses: { user_name: accept({ name: "pre" }) } }, info);
    expect(pre).toEqual({ resultType: "complete", content: [{ type: "text", text: "hello pre" }] });
  });

  it("answers under keys nobody asked are ignored; a __proto__ key reads nothing", async () => {
    const first = await runtime.callTool(ask, { name: "ask", arguments: {} }, info);
    expect(first.resultType).toBe("input_required");
    const state = (first as { requestState: string }).requestState;
    const responses = JSON.parse('{"__proto__": {"user_name": {"action":"accept","content":{"name":"proto"}}}, "other": {"action":"accept"}}');
    const again = await runtime.callTool(ask, { name: "ask", arguments: {}, requestState: state, inputResponses: responses }, info);
    expect(again.resultType).toBe("input_required");
    const done = await runtime.callTool(ask, { name: "ask", arguments: {}, requestState: state, inputResponses: { ...responses, user_name: accept({ name: "own" }) } }, info);
    expect(textOf(done as never)).toBe("hello own");
  });

  it("a malformed inputResponses is a -32602 error naming the field", async () => {
    for (const bad of [[1, 2], "x", 7, null]) {
      const e = await expectProtocolError(runtime.callTool(ask, { name: "ask", arguments: {}, inputResponses: bad }, info), -32602, "invalid_params");
      expect(e.message).toContain("inputResponses");
    }
  });

  it("refuses tampered, foreign and re-targeted states with -32602 and a stable reason", async () => {
    const first = (await runtime.callTool(ask, { name: "ask", arguments: {} }, info)) as { requestState: string };
    const call = (params: Record<string, unknown>) => runtime.callTool(ask, { name: "ask", arguments: {}, ...params }, info);
    await expectProtocolError(call({ requestState: `${first.requestState}-TAMPERED` }), -32602, "bad_signature");
    await expectProtocolError(call({ requestState: "garbage" }), -32602, "malformed");
    await expectProtocolError(call({ requestState: first.requestState, arguments: { x: 1 } }), -32602, "wrong_binding");
    const other = createRuntime({ state: { keys: [testKey("o", 6)] } });
    const foreign = (await other.callTool(ask, { name: "ask", arguments: {} }, info)) as { requestState: string };
    await expectProtocolError(call({ requestState: foreign.requestState }), -32602, "unknown_key");
    await expectProtocolError(
      runtime
        .callTool(ask, { name: "ask", arguments: {} }, { ...info, principal: "bob" })
        .then((r) => runtime.callTool(ask, { name: "ask", arguments: {}, requestState: (r as { requestState: string }).requestState }, { ...info, principal: "eve" })),
      -32602,
      "wrong_binding",
    );
  });

  it("invalid arguments are a -32602 error naming the argument", async () => {
    const e = await expectProtocolError(runtime.callTool(ask, { name: "ask", arguments: { x: "nope" } }, info), -32602, "invalid_arguments");
    expect(e.message).toContain("arguments.x");
  });

  it("never asks for an undeclared kind: -32021 with requiredCapabilities; ctx.can lets authors degrade", async () => {
    await expectProtocolError(runtime.callTool(ask, { name: "ask", arguments: {} }, { clientCapabilities: { sampling: {} } }), -32021);
    const degrade = tool({
      name: "degrade",
      description: "",
      input: z.object({}),
      *run(_i, ctx) {
        if (ctx.can("elicitation")) return String((yield* elicit("?", Name)).action);
        const s = yield* sample({ messages: [{ role: "user", content: { type: "text", text: "pick a name" } }], maxTokens: 10 });
        return s.model;
      },
    });
    const r = await runtime.callTool(degrade, { name: "degrade", arguments: {} }, { clientCapabilities: { sampling: {} } });
    expect(Object.values((r as { inputRequests: Record<string, { method: string }> }).inputRequests).map((q) => q.method)).toEqual(["sampling/createMessage"]);
    const urlOnly = await runtime.callTool(degrade, { name: "degrade", arguments: {} }, { clientCapabilities: { elicitation: { url: {} }, sampling: {} } });
    expect(Object.values((urlOnly as { inputRequests: Record<string, { method: string }> }).inputRequests)[0]!.method).toBe("sampling/createMessage");
    const e = await expectProtocolError(
      runtime.callTool(
        tool({
          name: "u",
          description: "",
          input: z.object({}),
          *run() {
            return (yield* elicitUrl("go", "https://example.com/x")).action;
          },
        }),
        { name: "u", arguments: {} },
        { clientCapabilities: { elicitation: {} } },
      ),
      -32021,
    );
    expect(e.data?.requiredCapabilities).toEqual({ elicitation: { url: {} } });
  });

  it("ctx's methods work destructured, resumed and replayed alike, and each is one function per call", async () => {
    const seen: Array<{ sameCan: boolean; sameKey: boolean; key: string; can: boolean }> = [];
    const destructured = tool({
      name: "destructured",
      description: "",
      input: z.object({}),
      *run(_i, ctx) {
        const { can, idempotencyKey } = ctx;
        const before = can("sampling");
        const a = yield* elicit("first?", Name);
        // After the ask: a resumed generator reaches here in a later round, with the same ctx.
        seen.push({ sameCan: ctx.can === can, sameKey: ctx.idempotencyKey === idempotencyKey, key: idempotencyKey("pay"), can: can("sampling") });
        return `${before} ${a.action}`;
      },
    });
    for (const liveCalls of [1000, 0]) {
      seen.length = 0;
      const rt = createRuntime({ state: { keys: [key] }, liveCalls });
      const first = (await rt.callTool(destructured, { name: "destructured", arguments: {} }, { clientCapabilities: everything })) as { requestState: string; inputRequests: Record<string, unknown> };
      const [k] = Object.keys(first.inputRequests);
      // The second request declares no sampling: the `can` before the ask answers what the first round recorded.
      const done = await rt.callTool(
        destructured,
        { name: "destructured", arguments: {}, requestState: first.requestState, inputResponses: { [k!]: { action: "accept", content: { name: "x" } } } },
        { clientCapabilities: { elicitation: {} } },
      );
      expect(textOf(done as { content: Array<Record<string, unknown>> })).toBe("true accept");
      expect(seen).toHaveLength(1);
      // The `can` after the ask is a new position: answered by this round's request (no
      // sampling) — the destructured function reaches the round running now, not the first.
      expect(seen[0]).toMatchObject({ sameCan: true, sameKey: true, can: false });
      expect(seen[0]!.key).toMatch(/^mcpy-[A-Za-z0-9_-]{32}$/);
    }
  });
});

describe("divergence", () => {
  const runtime = createRuntime({ state: { keys: [key] } });
  const info = { clientCapabilities: everything };
  const make = (second: string, version?: string, retiredVersions?: string[]) =>
    tool({
      name: "div",
      description: "",
      input: z.object({}),
      version,
      retiredVersions,
      *run() {
        yield* step("a", () => 1);
        yield* elicit("first?", Name);
        yield* step(second, () => 2);
        yield* elicit("second?", Name);
        return "done";
      },
    });

  async function twoRounds(def: ReturnType<typeof make>) {
    const r1 = (await runtime.callTool(def, { name: "div", arguments: {} }, info)) as { requestState: string };
    return (await runtime.callTool(def, { name: "div", arguments: {}, requestState: r1.requestState, inputResponses: { "elicit-0": accept({ name: "x" }) } }, info)) as { requestState: string };
  }

  it("names the index, what was recorded and what runs now", async () => {
    const r2 = await twoRounds(make("b"));
    const changed = make("renamed");
    const e = await expectProtocolError(
      runtime.callTool(changed, { name: "div", arguments: {}, requestState: r2.requestState, inputResponses: { "elicit-1": accept({ name: "y" }) } }, info),
      -32602,
      "journal_divergence",
    );
    expect(e.data).toMatchObject({ index: 2, recorded: "Sb", current: "Srenamed", restart: true });
    expect(e.message).toContain('step("b")');
    expect(e.message).toContain('step("renamed")');
  });

  it("refuses to deliver an answer to a different ask at the same key", async () => {
    const r1 = (await runtime.callTool(make("b"), { name: "div", arguments: {} }, info)) as { requestState: string };
    const reworded = tool({
      name: "div",
      description: "",
      input: z.object({}),
      *run() {
        yield* step("a", () => 1);
        yield* elicit("DELETE EVERYTHING?", Name);
        return "x";
      },
    });
    const e = await expectProtocolError(
      runtime.callTool(reworded, { name: "div", arguments: {}, requestState: r1.requestState, inputResponses: { "elicit-0": accept({ name: "x" }) } }, info),
      -32602,
      "journal_divergence",
    );
    expect(e.message).toContain('"elicit-0"');
  });

  describe("names the part of an ask that changed, on a replay in production (no double-run)", () => {
    const Other = z.object({ name: z.string(), age: z.number().optional() });
    const asker = (message: string, schema: z.ZodObject = Name, key?: string) =>
      tool({
        name: "div",
        description: "",
        input: z.object({}),
        *run() {
          yield* elicit("first?", Name);
          yield* elicit(message, schema as typeof Name, key ? { key } : {});
          return "x";
        },
      });
    // Two rounds answered with the old code, so the changed ask is a replayed record.
    async function replayed(old: ReturnType<typeof asker>, changed: ReturnType<typeof asker>, keys: [string, string] = ["elicit-0", "elicit-1"]) {
      const fresh = createRuntime({ state: { keys: [key] }, liveCalls: 0, onError: () => {} });
      const r1 = (await fresh.callTool(old, { name: "div", arguments: {} }, info)) as { requestState: string };
      const r2 = (await fresh.callTool(old, { name: "div", arguments: {}, requestState: r1.requestState, inputResponses: { [keys[0]]: accept({ name: "a" }) } }, info)) as { requestState: string };
      const r3 = (await fresh.callTool(old, { name: "div", arguments: {}, requestState: r2.requestState, inputResponses: { [keys[1]]: accept({ name: "b" }) } }, info)) as { resultType: string };
      expect(r3.resultType).toBe("complete");
      // The client repeats the last round (no store: allowed) after a deployment changed the code.
      return expectProtocolError(
        fresh.callTool(changed, { name: "div", arguments: {}, requestState: r2.requestState, inputResponses: { [keys[1]]: accept({ name: "b" }) } }, info),
        -32602,
        "journal_divergence",
      );
    }

    it("the message text, showing the new text", async () => {
      const e = await replayed(asker("Delete 3 files?"), asker("Delete 4 files?"));
      expect(e.data?.changed).toEqual(["text"]);
      expect(e.message).toContain('elicit under key "elicit-1": its message text (it is now "Delete 4 files?") changed');
    });

    it("the schema", async () => {
      const e = await replayed(asker("Who?"), asker("Who?", Other));
      expect(e.data?.changed).toEqual(["rest"]);
      expect(e.message).toContain("its requested schema changed");
    });

    it("the kind", async () => {
      const urlAsk = tool({
        name: "div",
        description: "",
        input: z.object({}),
        *run() {
          yield* elicit("first?", Name);
          yield* elicitUrl("Who?", "https://example.com/x", { key: "elicit-1" });
          return "x";
        },
      });
      const e = await replayed(asker("Who?"), urlAsk as unknown as ReturnType<typeof asker>);
      expect(e.data?.changed).toEqual(["kind"]);
      expect(e.message).toContain("the journal recorded elicit here and the code now makes elicitUrl");
    });

    it("a replayed record: the text of an answered ask changed", async () => {
      const fresh = createRuntime({ state: { keys: [key] }, liveCalls: 0, onError: () => {} });
      const old = asker("Second?");
      const r1 = (await fresh.callTool(old, { name: "div", arguments: {} }, info)) as { requestState: string };
      const r2 = (await fresh.callTool(old, { name: "div", arguments: {}, requestState: r1.requestState, inputResponses: { "elicit-0": accept({ name: "a" }) } }, info)) as { requestState: string };
      const changedFirst = tool({
        name: "div",
        description: "",
        input: z.object({}),
        *run() {
          yield* elicit("First, reworded?", Name);
          yield* elicit("Second?", Name);
          return "x";
        },
      });
      const e = await expectProtocolError(
        fresh.callTool(changedFirst, { name: "div", arguments: {}, requestState: r2.requestState, inputResponses: { "elicit-1": accept({ name: "b" }) } }, info),
        -32602,
        "journal_divergence",
      );
      expect(e.data).toMatchObject({ index: 0, changed: ["text"] });
      expect(e.message).toContain('at effect #0, elicit under key "elicit-0": its message text (it is now "First, reworded?") changed');
    });
  });

  it("a retired version is a divergence; a version the code does not know is handed back (code_unknown, retryable)", async () => {
    const r1 = (await runtime.callTool(make("b", "1"), { name: "div", arguments: {} }, info)) as { requestState: string };
    const e = await expectProtocolError(runtime.callTool(make("b", "2", ["1"]), { name: "div", arguments: {}, requestState: r1.requestState }, info), -32602, "journal_divergence");
    expect(e.message).toContain('"1" to "2"');
    // Not retired: newer code's (mid-deploy), or older code this one does not know is over.
    const unknown = await expectProtocolError(runtime.callTool(make("b", "2"), { name: "div", arguments: {}, requestState: r1.requestState }, info), -32603, "code_unknown");
    expect(unknown.message).toContain('version "1"');
    expect(unknown.data).toMatchObject({ retryAfterMs: 200 });
    // Unversioned calls end at a versioned definition; a definition cannot retire its own version.
    const r0 = (await runtime.callTool(make("b"), { name: "div", arguments: {} }, info)) as { requestState: string };
    await expectProtocolError(runtime.callTool(make("b", "2"), { name: "div", arguments: {}, requestState: r0.requestState }, info), -32602, "journal_divergence");
    expect(() => make("b", "2", ["2"])).toThrow(/retiredVersions lists its own version "2"/);
  });
});

describe("results and failures", () => {
  it("a thrown error becomes a safe isError result and reaches onError", async () => {
    const errors: unknown[] = [];
    const runtime = createRuntime({ state: { keys: [key] }, onError: (e) => errors.push(e) });
    const boom = tool({
      name: "boom",
      description: "",
      input: z.object({}),
      *run() {
        yield* step("s", () => {
          throw new Error("db password is hunter2");
        });
        return "never";
      },
    });
    const sim = await simulate(boom, {}, {}, { runtime });
    expect(sim.result.isError).toBe(true);
    expect(textOf(sim.result)).not.toContain("hunter2");
    expect((errors[0] as Error).message).toBe("db password is hunter2");
  });

  it("yielding something that is not an effect is an author error, a kind named like an Object.prototype member too", async () => {
    const errors: unknown[] = [];
    const runtime = createRuntime({ state: { keys: [key] }, onError: (e) => errors.push(e) });
    for (const kind of ["toString", "constructor", "__proto__", "hasOwnProperty", "valueOf", "Step", 7, undefined]) {
      const odd = tool({
        name: "odd",
        description: "",
        input: z.object({}),
        *run() {
          yield { kind } as never;
          return "never";
        },
      });
      expect((await simulate(odd, {}, {}, { runtime })).result.isError).toBe(true);
    }
    expect(errors).toHaveLength(8);
    for (const e of errors) expect(String((e as Error).message)).toMatch(/which is not an effect/);
    expect(isEffect({ kind: "now" })).toBe(true);
    expect(isEffect({ kind: "toString" })).toBe(false);
    expect(isEffect({ kind: "elicit" })).toBe(true);
  });

  it("every kind in the effect table is an effect, as a literal or as text made at run time, and nothing else is", () => {
    // isEffectKind compares the commonest kinds before its Set of the table's keys (effect-kinds.ts).
    for (const kind of Object.keys(EFFECT_KINDS)) {
      expect(isEffectKind(kind)).toBe(true);
      expect(isEffectKind([...kind].join(""))).toBe(true); // a string that is not the literal itself
    }
    const near = Object.keys(EFFECT_KINDS).flatMap((k) => [k.toUpperCase(), `${k} `, k.slice(1), `${k}s`]);
    for (const kind of [...near, "", "toString", "__proto__", "constructor", "ask", 1, null, undefined, {}, ["elicit"]]) expect(isEffectKind(kind)).toBe(false);
  });

  it("structured output is validated against output", async () => {
    const errors: unknown[] = [];
    const runtime = createRuntime({ state: { keys: [key] }, onError: (e) => errors.push(e) });
    const good = tool({
      name: "g",
      description: "",
      input: z.object({}),
      output: z.object({ n: z.number() }),
      *run() {
        return { n: 1 };
      },
    });
    const bad = tool({
      name: "b",
      description: "",
      input: z.object({}),
      output: z.object({ n: z.number() }),
      *run() {
        return { n: "one" } as never;
      },
    });
    expect((await simulate(good, {}, {}, { runtime })).result).toMatchObject({ structuredContent: { n: 1 }, content: [{ type: "text", text: '{"n":1}' }] });
    expect((await simulate(bad, {}, {}, { runtime })).result.isError).toBe(true);
    expect(errors).toHaveLength(1);
  });

  it("definitions refuse a bad name, a missing run or a relative resource uri", () => {
    expect(() =>
      tool({
        name: "has space",
        description: "",
        input: z.object({}),
        *run() {
          return "";
        },
      }),
    ).toThrow(/tool name must be/);
    expect(() => prompt({ name: "p", description: "", run: undefined as never })).toThrow(/prompt "p": run must be/);
    expect(() =>
      resource({
        uri: "relative/path",
        name: "r",
        *run() {
          return "";
        },
      }),
    ).toThrow(/absolute URI/);
  });

  it("a schema outside the elicitation subset is refused with a clear message", () => {
    expect(() => form(z.object({ nested: z.object({ a: z.string() }) }))).toThrow(ElicitationSchemaError);
    expect(() => form(z.object({ nested: z.object({ a: z.string() }) }))).toThrow(/field "nested": nested objects/);
    expect(() => form(z.object({ u: z.union([z.string(), z.number()]) }))).toThrow(/field "u"/);
    expect(() => form(z.object({ list: z.array(z.string()) }))).toThrow(/arrays must be arrays of a string enum/);
    expect(() => form(z.object({ when: z.date() }))).toThrow(ElicitationSchemaError);
    const ok = form(z.object({ e: z.email(), n: z.number().int().min(1), b: z.boolean().default(false), c: z.enum(["x", "y"]), m: z.array(z.enum(["p", "q"])), s: z.string().optional() }));
    expect(ok).toBeDefined();
  });

  it("a bad schema met inside run is an author error: isError result, ElicitationSchemaError to onError", async () => {
    const errors: unknown[] = [];
    const runtime = createRuntime({ state: { keys: [key] }, onError: (e) => errors.push(e) });
    const bad = tool({
      name: "bad",
      description: "",
      input: z.object({}),
      *run() {
        yield* elicit("?", z.object({ nested: z.object({ a: z.string() }) }));
        return "never";
      },
    });
    const r = await runtime.callTool(bad, { name: "bad", arguments: {} }, { clientCapabilities: everything });
    expect(r).toMatchObject({ resultType: "complete", isError: true });
    expect(errors[0]).toBeInstanceOf(ElicitationSchemaError);
  });

  it("prompts and resources run rounds too", async () => {
    const p = prompt({
      name: "p",
      description: "d",
      *run() {
        const a = yield* elicit("context?", z.object({ context: z.string() }), { key: "context" });
        return a.action === "accept" ? `Use ${a.content.context}` : "none";
      },
    });
    const sim = await simulate(p, {}, { context: accept({ context: "tests" }) });
    expect(sim.result.messages).toEqual([{ role: "user", content: { type: "text", text: "Use tests" } }]);
    const r = resource({
      uri: "demo://roots",
      name: "roots",
      mimeType: "text/plain",
      *run() {
        const rs = yield* listRoots();
        return rs.map((x: Root) => x.uri).join("\n");
      },
    });
    const rsim = await simulate(r, {}, () => roots("file:///one", "file:///two"));
    expect(rsim.result.contents).toEqual([{ uri: "demo://roots", mimeType: "text/plain", text: "file:///one\nfile:///two" }]);
  });

  it("a repeated final round completes the same way and the idempotency key is stable", async () => {
    const runtime = createRuntime({ state: { keys: [key] } });
    const keys: string[] = [];
    const pay = tool({
      name: "pay",
      description: "",
      input: z.object({}),
      *run(_i, ctx) {
        yield* elicit("ok?", Name, { key: "ok" });
        const k = ctx.idempotencyKey("charge");
        keys.push(k);
        return k;
      },
    });
    const r1 = (await runtime.callTool(pay, { name: "pay", arguments: {} }, { clientCapabilities: everything })) as { requestState: string };
    const final = { name: "pay", arguments: {}, requestState: r1.requestState, inputResponses: { ok: accept({ name: "y" }) } };
    const a = await runtime.callTool(pay, final, { clientCapabilities: everything });
    const b = await runtime.callTool(pay, final, { clientCapabilities: everything });
    expect(a).toEqual(b);
    const other = (await runtime.callTool(pay, { name: "pay", arguments: {} }, { clientCapabilities: everything })) as { requestState: string };
    await runtime.callTool(pay, { ...final, requestState: other.requestState }, { clientCapabilities: everything });
    expect(keys[0]).toBe(keys[1]);
    expect(keys[2]).not.toBe(keys[0]);
  });
});

describe("types", () => {
  it("elicit returns the schema's type through yield*", () => {
    const t = tool({
      name: "types",
      description: "",
      input: z.object({ d: z.string() }),
      *run({ d }) {
        expectTypeOf(d).toEqualTypeOf<string>();
        const a = yield* elicit("?", z.object({ n: z.number(), tags: z.array(z.enum(["a", "b"])) }));
        expectTypeOf(a).toEqualTypeOf<ElicitOutcome<{ n: number; tags: Array<"a" | "b"> }>>();
        if (a.action === "accept") expectTypeOf(a.content.n).toEqualTypeOf<number>();
        const rs = yield* listRoots();
        expectTypeOf(rs).toEqualTypeOf<Root[]>();
        const s = yield* step("s", async () => ({ at: new Date() }));
        expectTypeOf(s).toEqualTypeOf<{ at: Date }>();
        const [x, y] = yield* all([elicit("x", Name), listRoots()]);
        expectTypeOf(x).toEqualTypeOf<ElicitOutcome<{ name: string }>>();
        expectTypeOf(y).toEqualTypeOf<Root[]>();
        return "ok";
      },
    });
    expect(t.name).toBe("types");
  });
});

describe("live generators (resume on the same instance)", () => {
  const make = (log: string[]) =>
    tool({
      name: "live",
      description: "",
      input: z.object({}),
      *run(_i, ctx) {
        log.push("start");
        const a = yield* elicit("one?", Name, { key: "one" });
        log.push(`can sampling: ${ctx.can("sampling")}`);
        const b = yield* elicit("two?", Name, { key: "two" });
        return `${a.action}/${b.action}`;
      },
    });

  it("resumes instead of replaying, reads capabilities from each new request, and a repeated round replays", async () => {
    const log: string[] = [];
    const def = make(log);
    const runtime = createRuntime({ state: { keys: [key] } });
    const r1 = (await runtime.callTool(def, { name: "live", arguments: {} }, { clientCapabilities: { elicitation: {} } })) as { requestState: string };
    const round2 = { name: "live", arguments: {}, requestState: r1.requestState, inputResponses: { one: accept({ name: "a" }) } };
    const r2 = (await runtime.callTool(def, round2, { clientCapabilities: { elicitation: {}, sampling: {} } })) as { requestState: string };
    expect(log).toEqual(["start", "can sampling: true"]); // resumed: "start" ran once
    // The same state again (a client repeating round 2): the generator was already taken, so it replays.
    const again = (await runtime.callTool(def, round2, { clientCapabilities: { elicitation: {} } })) as { requestState: string };
    expect(log).toEqual(["start", "can sampling: true", "start", "can sampling: false"]);
    const finish = (state: string) => runtime.callTool(def, { name: "live", arguments: {}, requestState: state, inputResponses: { two: decline() } }, { clientCapabilities: { elicitation: {} } });
    expect(textOf((await finish(r2.requestState)) as never)).toBe("accept/decline");
    expect(textOf((await finish(again.requestState)) as never)).toBe("accept/decline");
  });

  it("a tampered token never reaches a live generator", async () => {
    const def = make([]);
    const runtime = createRuntime({ state: { keys: [key] } });
    const r1 = (await runtime.callTool(def, { name: "live", arguments: {} }, { clientCapabilities: { elicitation: {} } })) as { requestState: string };
    await expectProtocolError(runtime.callTool(def, { name: "live", arguments: { x: 1 }, requestState: r1.requestState }, { clientCapabilities: { elicitation: {} } }), -32602, "wrong_binding");
    // The legitimate next round still works (the failed attempt did not consume the live call either way).
    const ok = await runtime.callTool(def, { name: "live", arguments: {}, requestState: r1.requestState, inputResponses: { one: accept({ name: "z" }) } }, { clientCapabilities: { elicitation: {} } });
    expect(ok.resultType).toBe("input_required");
  });
});

describe("limits", () => {
  const ask = tool({
    name: "lim",
    description: "",
    input: z.object({}),
    *run() {
      for (;;) yield* elicit("again?", Name);
    },
  });
  const info = { clientCapabilities: everything };

  it("refuses too many, too large and too deeply nested inputResponses with -32602", async () => {
    const runtime = createRuntime({ state: { keys: [key] }, limits: { maxInputResponses: 4, maxInputResponseBytes: 1000, maxInputResponseDepth: 5 } });
    const call = (inputResponses: unknown) => runtime.callTool(ask, { name: "lim", arguments: {}, inputResponses }, info);
    await expectProtocolError(call(Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`k${i}`, {}]))), -32602, "too_many_input_responses");
    await expectProtocolError(call({ a: { action: "accept", content: { name: "x".repeat(2000) } } }), -32602, "input_responses_too_large");
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    await expectProtocolError(call({ a: deep }), -32602, "input_responses_too_deep");
    expect((await call({ a: [[[["ok"]]]] })).resultType).toBe("input_required");
    // The boundary: nesting of 5 inside an answer passes, 6 is refused.
    await expectProtocolError(call({ a: [[[[["x"]]]]] }), -32602, "input_responses_too_deep");
  });

  it("caps the rounds of one call", async () => {
    const runtime = createRuntime({ state: { keys: [key] }, limits: { maxRounds: 3 } });
    let state: string | undefined;
    for (let round = 1; round <= 3; round++) {
      const r = (await runtime.callTool(ask, { name: "lim", arguments: {}, ...(state ? { requestState: state } : {}), inputResponses: { [`elicit-${round - 2}`]: accept({ name: "n" }) } }, info)) as {
        requestState: string;
      };
      state = r.requestState;
    }
    const e = await expectProtocolError(runtime.callTool(ask, { name: "lim", arguments: {}, requestState: state }, info), -32602, "too_many_rounds");
    expect(e.data?.maxRounds).toBe(3);
  });

  it("a state that would outgrow maxTokenBytes ends the call with -32603 state_too_large and reaches onError", async () => {
    const errors: unknown[] = [];
    const runtime = createRuntime({ state: { keys: [key], maxTokenBytes: 1000 }, onError: (e) => errors.push(e) });
    const big = tool({
      name: "big",
      description: "",
      input: z.object({}),
      *run() {
        yield* step("blob", () => "x".repeat(2000));
        yield* elicit("more?", Name);
        return "never";
      },
    });
    await expectProtocolError(runtime.callTool(big, { name: "big", arguments: {} }, info), -32603, "state_too_large");
    expect(errors).toHaveLength(1);
  });

  it("refuses a non-positive limit when the runtime is built", () => {
    expect(() => createRuntime({ state: { keys: [key] }, limits: { maxRounds: 0 } })).toThrow(/maxRounds/);
  });
});

describe("refusals are rejected promises", () => {
  it("a request refused by its checks rejects with its JSON-RPC error: the methods never throw synchronously", async () => {
    const runtime = createRuntime({ state: { keys: [key] } });
    const ask = tool({
      name: "ask",
      description: "",
      input: z.object({ n: z.number() }),
      *run() {
        return (yield* elicit("name?", Name)).action;
      },
    });
    const p = prompt({
      name: "p",
      description: "",
      arguments: [{ name: "topic", required: true }],
      *run() {
        return "x";
      },
    });
    const r = resource({
      uri: "notes://one",
      name: "one",
      *run() {
        return "x";
      },
    });
    const info = { clientCapabilities: everything };
    const first = (await runtime.callTool(ask, { name: "ask", arguments: { n: 1 } }, info)) as { requestState: string };
    const tampered = tamperedEnd(first.requestState, 4);
    // Each call is made outside any await: a synchronous throw would fail the test here, not reject.
    const refused: Array<[() => Promise<unknown>, number, string]> = [
      [() => runtime.callTool(ask, null), -32602, "invalid_params"],
      [() => runtime.callTool(ask, { name: "other", arguments: { n: 1 } }), -32602, "invalid_params"],
      [() => runtime.callTool(ask, { name: "ask", arguments: { n: "one" } }), -32602, "invalid_arguments"],
      [() => runtime.callTool(ask, { name: "ask", arguments: { n: 1 }, requestState: tampered }, info), -32602, "bad_signature"],
      [() => runtime.callTool(ask, { name: "ask", arguments: { n: 2 }, requestState: first.requestState }, info), -32602, "wrong_binding"],
      [() => runtime.getPrompt(p, { name: "p", arguments: {} }), -32602, "invalid_arguments"],
      [() => runtime.readResource(r, { uri: "notes://two" }), -32602, "invalid_params"],
    ];
    for (const [call, code, reason] of refused) {
      let promise: Promise<unknown> | undefined;
      expect(() => (promise = call())).not.toThrow();
      await expectProtocolError(promise!, code, reason);
    }
  });
});

describe("papercuts", () => {
  it("simulate is typed from the definition: arguments, and structuredContent from output", async () => {
    const typed = tool({
      name: "typed",
      description: "",
      input: z.object({ n: z.number() }),
      output: z.object({ doubled: z.number() }),
      *run({ n }) {
        return { doubled: n * 2 };
      },
    });
    const sim = await simulate(typed, { n: 21 });
    expectTypeOf(sim.result.structuredContent).toEqualTypeOf<({ doubled: number } & Record<string, unknown>) | undefined>();
    expect(sim.result.structuredContent?.doubled).toBe(42);
    // @ts-expect-error: an argument the tool does not take
    await expect(simulate(typed, { m: 1 })).rejects.toMatchObject({ data: { reason: "invalid_arguments" } });
  });

  it("-32021 on a request without a capabilities envelope says the client may be speaking 2025-era", async () => {
    const runtime = createRuntime({ state: { keys: [key] } });
    const ask = tool({
      name: "a",
      description: "",
      input: z.object({}),
      *run() {
        return (yield* elicit("?", Name)).action;
      },
    });
    const e = await expectProtocolError(runtime.callTool(ask, { name: "a", arguments: {} }, {}), -32021);
    expect(e.message).toMatch(/no io\.modelcontextprotocol\/clientCapabilities at all — a 2025-era client, or an SDK client not pinned to 2026-07-28/);
    // A request that declares something else gets the plain message.
    const plain = await expectProtocolError(runtime.callTool(ask, { name: "a", arguments: {} }, { clientCapabilities: { sampling: {} } }), -32021);
    expect(plain.message).not.toMatch(/2025-era/);
  });
});
