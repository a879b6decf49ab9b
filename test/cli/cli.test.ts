import { runCli } from "../support/cli.js";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createMemoryStore, createRuntime, createStateCodec, elicit, parseKeyRing, StateConfigError, step, tool } from "mcp-yield";
import { type CliInput, keygen, main } from "../../src/cli.js";

describe("npx mcp-yield keygen", () => {
  it("prints a ready id:secret that parses into a working key ring", async () => {
    const lines: string[] = [];
    expect(
      await main(
        ["keygen", "prod-1"],
        (l) => lines.push(l),
        () => {},
      ),
    ).toBe(0);
    const [key] = parseKeyRing(lines[0]!);
    expect(key!.id).toBe("prod-1");
    expect(key!.secret.length).toBe(32);
    const codec = createStateCodec({ keys: parseKeyRing(lines[0]!) });
    const binding = { method: "tools/call", target: "t" } as const;
    expect(codec.open(codec.seal({ binding, data: 1 }), binding).data).toBe(1);
    expect(keygen()).toMatch(/^k\d{8}-[A-Za-z0-9_-]{6}:[A-Za-z0-9_-]{43}$/);
    // Two keys made the same day get different ids (a shared id would check tokens with the wrong secret).
    const ids = new Set(Array.from({ length: 50 }, () => keygen().split(":")[0]));
    expect(ids.size).toBe(50);
    expect(keygen("a")).not.toBe(keygen("a"));
  });

  it("refuses a bad id and an unknown command", async () => {
    const errors: string[] = [];
    expect(
      await main(
        ["keygen", "has space"],
        () => {},
        (l) => errors.push(l),
      ),
    ).toBe(1);
    expect(
      await main(
        ["nope"],
        () => {},
        (l) => errors.push(l),
      ),
    ).toBe(2);
    expect(errors.join("\n")).toMatch(/key id must be 1-32 characters[\s\S]*unknown command "nope"/);
  });

  it("an unset MCP_YIELD_KEYS is a clear error, not a crash in split()", () => {
    expect(() => parseKeyRing(undefined)).toThrow(StateConfigError);
    expect(() => parseKeyRing(process.env.MCP_YIELD_UNSET_FOR_THIS_TEST)).toThrow(/is MCP_YIELD_KEYS set\?\). Generate one with `npx mcp-yield keygen`/);
  });
});

describe("npx mcp-yield inspect", () => {
  const ring = keygen("k1");
  const env = { MCP_YIELD_KEYS: ring };
  const Pick = z.object({ choice: z.string() });
  const t = tool({
    name: "plan",
    description: "",
    input: z.object({ city: z.string() }),
    *run({ city }, ctx) {
      const found = yield* step("search", () => ({ city, at: new Date(0) }));
      ctx.can("sampling");
      const first = yield* elicit("Which hotel?", Pick);
      yield* elicit(`Confirm ${first.action} in ${found.city}?`, Pick);
      return "done";
    },
  });
  async function secondRoundToken(mode: "sealed" | "signed" = "sealed"): Promise<string> {
    const runtime = createRuntime({ state: { keys: parseKeyRing(ring), mode } });
    const caps = { clientCapabilities: { elicitation: {} } };
    const r1 = (await runtime.callTool(t, { name: "plan", arguments: { city: "Oslo" } }, { ...caps, principal: "alice" })) as { requestState: string };
    const r2 = (await runtime.callTool(
      t,
      { name: "plan", arguments: { city: "Oslo" }, requestState: r1.requestState, inputResponses: { "elicit-0": { action: "accept", content: { choice: "Grand" } } } },
      { ...caps, principal: "alice" },
    )) as { requestState: string };
    return r2.requestState;
  }
  const run = (argv: string[], input: Partial<CliInput> = {}) => runCli(argv, { env, stdin: async () => "", ...input });

  it("shows claims, binding, round, call id, each record and the outstanding ask — and no secret", async () => {
    for (const mode of ["sealed", "signed"] as const) {
      const token = await secondRoundToken(mode);
      const { code, out } = await run(["inspect", token]);
      expect(code).toBe(0);
      expect(out).toMatch(/^requestState y2[es], key k1: authentic/);
      expect(out).toContain('bound to  tools/call "plan", arguments sha256');
      expect(out).toContain("principal bound (keyed hash)");
      expect(out).toMatch(/call {6}[0-9a-f-]{36}, 2 rounds done/);
      expect(out).toContain('#0 step("search") → {"city":"Oslo","at":"1970-01-01T00:00:00.000Z"} (with Date/Map/Set/BigInt/undefined kept)');
      expect(out).toContain('#1 ctx.can("sampling") → false');
      expect(out).toContain('#2 elicit (ask #0) → accept {"choice":"Grand"}');
      expect(out).toMatch(/waiting for\n {4}elicit-1: elicit/);
      expect(out).not.toContain(ring.split(":")[1]!);
    }
  });

  it("--json for machines, and - reads the token from stdin", async () => {
    const token = await secondRoundToken();
    const { code, out } = await run(["inspect", "-", "--json"], { stdin: async () => `${token}\n` });
    expect(code).toBe(0);
    const report = JSON.parse(out) as { binding: { target: string }; round: number; records: Array<{ effect: string; value: string }>; outstanding: Record<string, string>; expired: boolean };
    expect(report).toMatchObject({ binding: { target: "plan" }, round: 2, expired: false });
    expect(report.records.map((r) => r.effect)).toEqual(['step("search")', 'ctx.can("sampling")', "elicit (ask #0)"]);
    expect(Object.keys(report.outstanding)).toEqual(["elicit-1"]);
  });

  it("names a journal spilled to the store instead of showing it", async () => {
    const runtime = createRuntime({ state: { keys: parseKeyRing(ring) }, store: createMemoryStore(), spillBytes: 1 });
    const r1 = (await runtime.callTool(t, { name: "plan", arguments: { city: "Oslo" } }, { clientCapabilities: { elicitation: {} } })) as { requestState: string };
    const { code, out } = await run(["inspect", r1.requestState]);
    expect(code).toBe(0);
    expect(out).toMatch(/journal {3}spilled to the server's store \(entry state:[\w-]+, sha256 [\w-]+\); not in the token/);
    expect(out).toMatch(/waiting for\n {4}elicit-0: elicit/);
  });

  it("refuses without the right key, an altered token, and without a key ring", async () => {
    const token = await secondRoundToken();
    const other = await run(["inspect", token], { env: { MCP_YIELD_KEYS: keygen("k1") } });
    expect(other.code).toBe(1);
    expect(other.err).toContain("the token was refused (bad_signature)");
    const unknown = await run(["inspect", token], { env: { MCP_YIELD_KEYS: keygen("k2") } });
    expect(unknown.err).toContain("(unknown_key)");
    const altered = token.slice(0, -3) + (token.at(-3) === "A" ? "B" : "A") + token.slice(-2);
    expect((await run(["inspect", altered])).err).toContain("the token was refused (bad_signature)");
    const none = await run(["inspect", token], { env: {} });
    expect(none.code).toBe(1);
    expect(none.err).toContain("is MCP_YIELD_KEYS set?");
    expect((await run(["inspect"])).err).toContain("inspect takes one token");
  });
});
