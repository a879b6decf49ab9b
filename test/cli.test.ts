import { describe, expect, it } from "vitest";
import { createStateCodec, parseKeyRing, StateConfigError } from "mcp-yield";
import { keygen, main } from "../src/cli.js";

describe("npx mcp-yield keygen", () => {
  it("prints a ready id:secret that parses into a working key ring", () => {
    const lines: string[] = [];
    expect(main(["keygen", "prod-1"], (l) => lines.push(l), () => {})).toBe(0);
    const [key] = parseKeyRing(lines[0]!);
    expect(key!.id).toBe("prod-1");
    expect(key!.secret.length).toBe(32);
    const codec = createStateCodec({ keys: parseKeyRing(lines[0]!) });
    const binding = { method: "tools/call", target: "t" } as const;
    expect(codec.open(codec.seal({ binding, data: 1 }), binding).data).toBe(1);
    expect(keygen()).toMatch(/^k\d{8}:[A-Za-z0-9_-]{43}$/);
    expect(keygen("a")).not.toBe(keygen("a"));
  });

  it("refuses a bad id and an unknown command", () => {
    const errors: string[] = [];
    expect(main(["keygen", "has space"], () => {}, (l) => errors.push(l))).toBe(1);
    expect(main(["nope"], () => {}, (l) => errors.push(l))).toBe(2);
    expect(errors.join("\n")).toMatch(/key id must be 1-32 characters[\s\S]*unknown command "nope"/);
  });

  it("an unset MCP_YIELD_KEYS is a clear error, not a crash in split()", () => {
    expect(() => parseKeyRing(undefined)).toThrow(StateConfigError);
    expect(() => parseKeyRing(process.env.MCP_YIELD_UNSET_FOR_THIS_TEST)).toThrow(/is MCP_YIELD_KEYS set\?\). Generate one with `npx mcp-yield keygen`/);
  });
});
