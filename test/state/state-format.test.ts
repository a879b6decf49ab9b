import { describe, expect, it } from "vitest";
import { createRuntime, elicit, ProtocolError, tool } from "mcp-yield";
import { z } from "zod";
import { testKey } from "../support/keys.js";
import { textOf } from "../support/results.js";

describe("token format 1 (never released) is gone", () => {
  const Pick = z.object({ choice: z.string() });
  const keys = [testKey("k", 4)];
  const t = tool({
    name: "pick",
    description: "",
    input: z.object({}),
    *run() {
      const a = yield* elicit("x?", Pick, { key: "x" });
      return a.action;
    },
  });

  it("a y1 token is refused as an unsupported version, before its key or tag are looked at, whatever it carries", async () => {
    const runtime = createRuntime({ state: { keys } });
    const first = (await runtime.callTool(t, { name: "pick", arguments: {} }, { clientCapabilities: { elicitation: {} } })) as { requestState: string };
    for (const version of ["y1e", "y1s"]) {
      // An authentic format-2 token relabelled, and one under a key this server does not hold.
      for (const token of [version + first.requestState.slice(3), `${version}.nokey.AAAA${version === "y1s" ? ".AAAA" : ""}`]) {
        const error = await runtime.callTool(t, { name: "pick", arguments: {}, requestState: token, inputResponses: {} }, { clientCapabilities: { elicitation: {} } }).catch((e: unknown) => e);
        expect(error, token).toBeInstanceOf(ProtocolError);
        expect((error as ProtocolError).code).toBe(-32602);
        expect((error as ProtocolError).data?.reason).toBe("unsupported_version");
      }
    }
    // The format-2 token itself still completes the call.
    const done = await runtime.callTool(
      t,
      { name: "pick", arguments: {}, requestState: first.requestState, inputResponses: { x: { action: "accept", content: { choice: "A" } } } },
      { clientCapabilities: { elicitation: {} } },
    );
    expect(textOf(done)).toBe("accept");
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
