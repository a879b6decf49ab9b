import { describe, expect, it } from "vitest";
import { createMemoryStore, createRuntime, elicit, parseKeyRing, ProtocolError, type Runtime, tool } from "mcp-yield";
import { z } from "zod";
import { FORMAT1_ARGS, FORMAT1_CAPS, FORMAT1_CLOCK, FORMAT1_KEYS, format1Tool } from "../fixtures/format1-tool.js";
import fixtures from "../fixtures/format1-tokens.json" with { type: "json" };
import { testKey } from "../support/keys.js";
import { textOf } from "../support/results.js";

type Fixture = { token: string; stored: Record<string, string> };
const EXPECTED = `ada 2026-01-02T00:00:00.000Z true ${FORMAT1_CLOCK} A,X,Y`;
const answer = (choice: string) => ({ action: "accept", content: { choice } });

async function runtimeFor(fixture: Fixture, extra: Partial<Parameters<typeof createRuntime>[0]> = {}): Promise<Runtime> {
  const store = createMemoryStore();
  for (const [key, value] of Object.entries(fixture.stored)) await store.set(key, value, 3_600_000);
  const clock = () => FORMAT1_CLOCK + 1000;
  return createRuntime({ state: { keys: parseKeyRing(FORMAT1_KEYS), clock }, clock, store, ...extra });
}

const call = (runtime: Runtime, requestState: string, inputResponses: Record<string, unknown>) =>
  runtime.callTool(format1Tool, { name: "format1", arguments: FORMAT1_ARGS, requestState, inputResponses }, { clientCapabilities: FORMAT1_CAPS });

describe("states minted before the line format (format 1)", () => {
  for (const [name, fixture] of Object.entries(fixtures as Record<string, Fixture>)) {
    it(`${name}: a call in flight goes on to the same result`, async () => {
      const result = await call(await runtimeFor(fixture, { verifyReplay: true }), fixture.token, { y: answer("Y") });
      expect(textOf(result)).toBe(EXPECTED);
    });

    it(`${name}: its next state is minted in format 2 and carries the converted journal`, async () => {
      const runtime = await runtimeFor(fixture, { liveCalls: 0 });
      // No answer for y: the kept answer to x and the journal move into a format-2 state.
      const next = (await call(runtime, fixture.token, {})) as { resultType: string; requestState: string };
      expect(next.resultType).toBe("input_required");
      expect(next.requestState.slice(0, 3)).toMatch(/^y2[es]$/);
      const done = await call(runtime, next.requestState, { y: answer("Y") });
      expect(textOf(done)).toBe(EXPECTED);
    });
  }

  it("a format-1 token altered by one character is refused", async () => {
    const { token, stored } = (fixtures as Record<string, Fixture>).signed!;
    const i = token.indexOf(".", 4) + 20;
    const altered = token.slice(0, i) + (token[i] === "A" ? "B" : "A") + token.slice(i + 1);
    const error = await call(await runtimeFor({ token, stored }), altered, { y: answer("Y") }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).data?.reason).toBe("bad_signature");
  });
});

describe("a token this instance holds is recognised without decoding, never trusted past its binding", () => {
  const Ok = z.object({ ok: z.boolean() });
  const keys = [testKey("k", 3)];
  let runs = 0;
  const t = tool({
    name: "held",
    description: "",
    input: z.object({ n: z.number() }),
    *run({ n }) {
      runs++;
      const a = yield* elicit("a?", Ok, { key: "a" });
      return `${n} ${a.action}`;
    },
  });
  const setup = async () => {
    let now = 5_000_000;
    const runtime = createRuntime({ state: { keys, clock: () => now, ttlSeconds: 60 }, clock: () => now });
    const first = (await runtime.callTool(t, { name: "held", arguments: { n: 1 } }, { principal: "alice", clientCapabilities: { elicitation: {} } })) as { requestState: string };
    runs = 0;
    const again = (args: unknown, principal: string, requestState = first.requestState) =>
      runtime.callTool(t, { name: "held", arguments: args, requestState, inputResponses: { a: { action: "accept", content: { ok: true } } } }, { principal, clientCapabilities: { elicitation: {} } });
    return { again, token: first.requestState, advance: (ms: number) => (now += ms) };
  };
  const reasonOf = (p: Promise<unknown>) =>
    p.then(
      () => "accepted",
      (e: unknown) => (e instanceof ProtocolError ? e.data?.reason : String(e)),
    );

  it("the same call resumes its generator", async () => {
    const { again } = await setup();
    expect(textOf(await again({ n: 1 }, "alice"))).toBe("1 accept");
    expect(runs).toBe(0); // resumed: run() was not started again
  });

  it("other arguments, another principal, expiry and an altered token are refused as without it", async () => {
    const s = await setup();
    expect(await reasonOf(s.again({ n: 2 }, "alice"))).toBe("wrong_binding");
    expect(await reasonOf(s.again({ n: 1 }, "bob"))).toBe("wrong_binding");
    const altered = s.token.slice(0, -5) + (s.token.at(-5) === "A" ? "B" : "A") + s.token.slice(-4);
    expect(await reasonOf(s.again({ n: 1 }, "alice", altered))).toBe("bad_signature");
    s.advance(60_000);
    expect(await reasonOf(s.again({ n: 1 }, "alice"))).toBe("expired");
    expect(runs).toBe(0);
  });

  it("after the refusals, the rightful round still resumes", async () => {
    const s = await setup();
    await reasonOf(s.again({ n: 2 }, "alice"));
    await reasonOf(s.again({ n: 1 }, "bob"));
    expect(textOf(await s.again({ n: 1 }, "alice"))).toBe("1 accept");
    expect(runs).toBe(0);
  });
});
