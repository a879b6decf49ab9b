import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createRuntime, createStateCodec, elicit, parseKeyRing, type StateBinding, StateConfigError, StateError, type StateErrorReason, tool, UnsupportedValueError } from "mcp-yield";
import { decodeBase64url, encodeBase64url } from "../../src/internal.js";

const secret = (fill: number, length = 32) => new Uint8Array(length).fill(fill);
const k1 = { id: "k1", secret: secret(1) };
const k2 = { id: "k2", secret: secret(2) };
const binding: StateBinding = { method: "tools/call", target: "book_flight", arguments: { destination: "Lisbon" }, principal: "alice" };
const data = { journal: [{ k: "step:draft", v: { id: "d-1", price: 420 } }], at: new Date(0), tags: new Set(["a"]), big: 10n ** 20n, gone: undefined, m: new Map([["x", 1]]) };

function reasonOf(fn: () => unknown): StateErrorReason | "accepted" | "other" {
  try {
    fn();
    return "accepted";
  } catch (e) {
    return e instanceof StateError ? e.reason : "other";
  }
}

describe.each(["signed", "sealed"] as const)("state codec (%s)", (mode) => {
  let now = 1_700_000_000_000;
  const codec = createStateCodec<typeof data>({ keys: [k1], mode, clock: () => now });

  it("round-trips superjson values (Date, Set, Map, BigInt, undefined)", () => {
    const opened = codec.open(codec.seal({ binding, data }), binding);
    expect(opened.data).toEqual(data);
    expect(opened.data.at).toBeInstanceOf(Date);
    expect(opened.data.tags).toBeInstanceOf(Set);
    expect(opened.data.m.get("x")).toBe(1);
    expect(opened.data.big).toBe(10n ** 20n);
    expect("gone" in opened.data).toBe(true);
    expect(opened.expiresAt - opened.issuedAt).toBe(600_000);
    expect(opened.keyId).toBe("k1");
  });

  it("has the documented format", () => {
    const token = codec.seal({ binding, data });
    const parts = token.split(".");
    expect(parts[0]).toBe(mode === "signed" ? "y2s" : "y2e");
    expect(parts[1]).toBe("k1");
    expect(parts).toHaveLength(mode === "signed" ? 4 : 3);
    for (const p of parts) expect(p).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it(mode === "sealed" ? "hides the payload from the client" : "exposes the payload but not the principal", () => {
    const token = codec.seal({ binding, data: { ...data, journal: [{ k: "secret-step", v: { id: "server-private", price: 1 } }] } });
    const bytes = token
      .split(".")
      .map((p) => new TextDecoder().decode(decodeBase64url(p) ?? new Uint8Array()))
      .join("|");
    expect(bytes.includes("server-private")).toBe(mode === "signed");
    expect(bytes.includes("alice")).toBe(false);
  });

  it("mints a fresh token (new nonce) every time", () => {
    expect(codec.seal({ binding, data })).not.toBe(codec.seal({ binding, data }));
  });

  it("refuses an expired token and renews expiry on every seal", () => {
    const token = codec.seal({ binding, data });
    now += 599_999;
    expect(reasonOf(() => codec.open(token, binding))).toBe("accepted");
    const renewed = codec.seal({ binding, data });
    now += 1;
    expect(reasonOf(() => codec.open(token, binding))).toBe("expired");
    expect(reasonOf(() => codec.open(renewed, binding))).toBe("accepted");
  });

  it("refuses another tool, method, arguments or principal", () => {
    const token = codec.seal({ binding, data });
    expect(reasonOf(() => codec.open(token, { ...binding, target: "plan_trip" }))).toBe("wrong_binding");
    expect(reasonOf(() => codec.open(token, { ...binding, method: "prompts/get" }))).toBe("wrong_binding");
    expect(reasonOf(() => codec.open(token, { ...binding, arguments: { destination: "Porto" } }))).toBe("wrong_binding");
    expect(reasonOf(() => codec.open(token, { ...binding, principal: "mallory" }))).toBe("wrong_binding");
    expect(reasonOf(() => codec.open(token, { ...binding, principal: undefined }))).toBe("wrong_binding");
    // Argument order does not matter: the digest is over canonical JSON.
    const two = codec.seal({ binding: { ...binding, arguments: { a: 1, b: [1, { c: 2, d: 3 }] } }, data });
    expect(reasonOf(() => codec.open(two, { ...binding, arguments: { b: [1, { d: 3, c: 2 }], a: 1 } }))).toBe("accepted");
  });

  it("refuses a token sealed with a key it does not hold, and a forged key id", () => {
    const other = createStateCodec({ keys: [k2], mode, clock: () => now });
    expect(reasonOf(() => codec.open(other.seal({ binding, data }), binding))).toBe("unknown_key");
    const forged = other.seal({ binding, data }).replace(".k2.", ".k1.");
    expect(reasonOf(() => codec.open(forged, binding))).toBe("bad_signature");
  });

  it("refuses appended text, truncation, swapped segments and junk", () => {
    const token = codec.seal({ binding, data });
    expect(reasonOf(() => codec.open(`${token}-TAMPERED`, binding))).toBe("bad_signature");
    expect(reasonOf(() => codec.open(`${token}TAMPERED`, binding))).toBe("bad_signature");
    expect(reasonOf(() => codec.open(token.slice(0, -1), binding))).toBe("bad_signature");
    expect(reasonOf(() => codec.open(token.slice(0, 10), binding))).not.toBe("accepted");
    const parts = token.split(".");
    if (mode === "signed") {
      expect(reasonOf(() => codec.open([parts[0], parts[1], parts[3], parts[2]].join("."), binding))).toBe("bad_signature");
    } else {
      expect(reasonOf(() => codec.open([parts[0], parts[2], parts[1]].join("."), binding))).toBe("unknown_key");
    }
    expect(reasonOf(() => codec.open("", binding))).toBe("malformed");
    expect(reasonOf(() => codec.open("y9z.k1.abc", binding))).toBe("unsupported_version");
    expect(reasonOf(() => codec.open("eyJhbGciOi.x.y", binding))).toBe("malformed");
    expect(reasonOf(() => codec.open("y1s.k1.a b.c", binding))).toBe("malformed");
    expect(reasonOf(() => codec.open(42, binding))).toBe("malformed");
    expect(reasonOf(() => codec.open(null, binding))).toBe("malformed");
  });

  it("refuses every single-character change (property, thousands of mutations)", () => {
    const token = codec.seal({ binding, data });
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ ~é";
    fc.assert(
      fc.property(fc.nat(token.length - 1), fc.constantFrom(...alphabet), (index, ch) => {
        fc.pre(token[index] !== ch);
        const mutated = token.slice(0, index) + ch + token.slice(index + 1);
        const reason = reasonOf(() => codec.open(mutated, binding));
        expect(["malformed", "unknown_key", "bad_signature", "unsupported_version"]).toContain(reason);
      }),
      { numRuns: 3000 },
    );
  });

  it("a character outside base64url anywhere — payload or not, `+`, `/`, `=`, space, non-ASCII — is malformed for that reason, before anything is opened (property)", () => {
    const token = codec.seal({ binding, data });
    const foreign = "+/= ~!é\u0100\n\t%";
    fc.assert(
      fc.property(fc.nat(token.length - 1), fc.constantFrom(...foreign), fc.boolean(), (index, ch, insert) => {
        const mutated = token.slice(0, index) + ch + token.slice(insert ? index : index + 1);
        let error: unknown;
        try {
          codec.open(mutated, binding);
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(StateError);
        expect((error as StateError).reason).toBe("malformed");
        expect((error as StateError).message).toBe("requestState contains characters outside base64url");
      }),
      { numRuns: 1500 },
    );
  });

  it("a payload of base64url characters that is not canonical (a length of 4n + 1, trailing bits set) is never accepted", () => {
    const token = codec.seal({ binding, data });
    const [version, key, payload, tag] = token.split(".");
    const withPayload = (p: string) => [version, key, p, ...(tag === undefined ? [] : [tag])].join(".");
    const rest = payload!.length % 4;
    expect(rest).not.toBe(1);
    // Padded with "A"s to a length of 4n + 1, which no encoder makes.
    const longer = `${payload}${"A".repeat((5 - rest) % 4)}`;
    expect(longer.length % 4).toBe(1);
    expect(reasonOf(() => codec.open(withPayload(longer), binding))).not.toBe("accepted");
    // The last character's unused bits set: on a 4n + 2 or 4n + 3 length (one character cut when it is 4n).
    const partial = rest === 0 ? payload!.slice(0, -1) : payload!;
    const last = partial.at(-1)!;
    const flipped = last === "B" ? "C" : "B"; // "B" and "C" have the low bits 000001 and 000010
    expect(reasonOf(() => codec.open(withPayload(partial.slice(0, -1) + flipped), binding))).not.toBe("accepted");
  });

  it("refuses random insertions, deletions and splices (property)", () => {
    const token = codec.seal({ binding, data });
    fc.assert(
      fc.property(fc.nat(token.length), fc.nat(8), fc.string({ maxLength: 8 }), (at, cut, insert) => {
        const mutated = token.slice(0, at) + insert + token.slice(at + cut);
        fc.pre(mutated !== token);
        expect(reasonOf(() => codec.open(mutated, binding))).not.toBe("accepted");
      }),
      { numRuns: 2000 },
    );
  });

  it("never accepts arbitrary strings and never throws anything but StateError (property)", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.constantFrom("y1s.k1..", "y1e.k1.", "y1s.k1.a.b", "y1e.k1.AAAA", "y2s.k1..", "y2e.k1.", "y2s.k1.a.b", "y2e.k1.AAAA")),
        (s) => {
          const reason = reasonOf(() => codec.open(s, binding));
          expect(reason).not.toBe("accepted");
          expect(reason).not.toBe("other");
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("applies the size limit before any crypto, on open and on seal", () => {
    const small = createStateCodec({ keys: [k1], mode, maxTokenBytes: 200, clock: () => now });
    expect(reasonOf(() => small.open("y1s.k1." + "A".repeat(300), binding))).toBe("too_large");
    // Over the limit and not even a token: size is still what is reported.
    expect(reasonOf(() => small.open("\u0000".repeat(201), binding))).toBe("too_large");
    expect(reasonOf(() => small.seal({ binding, data: { blob: "x".repeat(500) } as never }))).toBe("too_large");
    const big = createStateCodec({ keys: [k1], mode, clock: () => now });
    expect(reasonOf(() => big.open("A".repeat(65537), binding))).toBe("too_large");
  });

  it("does not pollute prototypes through __proto__ / constructor keys in the payload", () => {
    const c = createStateCodec<unknown>({ keys: [k1], mode, clock: () => now });
    // constructor / prototype keys are ordinary data: they round-trip and touch no prototype.
    const ctor = JSON.parse('{"constructor":{"prototype":{"polluted":true}},"a":{"constructor":{"polluted":true}}}');
    const opened = c.open(c.seal({ binding, data: ctor }), binding).data as Record<string, unknown>;
    expect(opened).toEqual(ctor);
    expect(Object.getPrototypeOf(opened)).toBe(Object.prototype);
    // __proto__ own keys (what JSON.parse makes of client input) come back as own data, not prototypes.
    const proto = JSON.parse('{"a":{"__proto__":{"polluted":true}},"~~x":[{"prototype":1}],"when":{"__proto__":1}}');
    const back = c.open(c.seal({ binding, data: proto }), binding).data as Record<string, Record<string, unknown>>;
    expect(Object.getPrototypeOf(back.a)).toBe(Object.prototype);
    expect(Object.keys(back.a!)).toEqual(["__proto__"]);
    expect(Object.getOwnPropertyDescriptor(back.a, "__proto__")?.value).toEqual({ polluted: true });
    expect(back["~~x"]).toEqual([{ prototype: 1 }]);
    expect((back.a as { polluted?: unknown }).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((Object.prototype as unknown as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("refuses data the journal's value rules refuse (class instances, functions, cycles) instead of flattening or renaming it", () => {
    const c = createStateCodec<unknown>({ keys: [k1], mode, clock: () => now });
    class Draft {
      "~~k" = 1;
      price = 2;
    }
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => c.seal({ binding, data: { draft: new Draft() } })).toThrow(UnsupportedValueError);
    expect(() => c.seal({ binding, data: { draft: new Draft() } })).toThrow(/\$\.draft is an instance of Draft/);
    expect(() => c.seal({ binding, data: { f: () => 1 } })).toThrow(/\$\.f is a function/);
    expect(() => c.seal({ binding, data: cycle })).toThrow(/cycle/);
    // A "~~k" key in plain data is data: it comes back under its own name.
    const plain = { "~~k": 1, inner: { "~~k": [new Date(0)] } };
    expect(c.open(c.seal({ binding, data: plain }), binding).data).toEqual(plain);
  });
});

describe("payload encoding", () => {
  const codec = createStateCodec<unknown>({ keys: [k1] });
  const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
    v: fc.oneof(
      { depthSize: "small" },
      fc.string(),
      fc.double(),
      fc.constantFrom(-0, Number.NaN, Number.POSITIVE_INFINITY),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.constant(undefined),
      fc.bigInt(),
      fc.date({ noInvalidDate: true }),
      fc.array(tie("v"), { maxLength: 4 }),
      fc.dictionary(fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom("__proto__", "constructor", "prototype", "~~x")), tie("v"), { maxKeys: 4, noNullPrototype: true }),
      fc.array(tie("v"), { maxLength: 3 }).map((xs) => new Set(xs)),
      fc.array(fc.tuple(fc.string({ maxLength: 4 }), tie("v")), { maxLength: 3 }).map((es) => new Map(es)),
    ),
  })).v;

  /** Deep equality that also tells undefined members from missing ones and checks prototypes
   *  (toStrictEqual cannot be used: it compares objects by their `constructor` member, which
   *  here is sometimes data). */
  function same(a: unknown, b: unknown): boolean {
    if (Object.is(a, b)) return true;
    if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
    if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
    if (a instanceof Date) return a.getTime() === (b as Date).getTime();
    if (a instanceof Map || a instanceof Set) return same([...a], [...(b as Map<unknown, unknown>)]);
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }

  it("round-trips JSON, Date, Map, Set, BigInt, undefined and reserved keys exactly (property)", () => {
    fc.assert(
      fc.property(value, (data) => {
        const back = codec.open(codec.seal({ binding, data }), binding).data;
        expect(same(back, data), JSON.stringify(String(data))).toBe(true);
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      }),
      { numRuns: 1500 },
    );
  });
});

describe("key ring", () => {
  const now = () => 1_700_000_000_000;

  it("rotation: new key first keeps old tokens valid until the old key is dropped", () => {
    const before = createStateCodec({ keys: [k1], clock: now });
    const during = createStateCodec({ keys: [k2, k1], clock: now });
    const after = createStateCodec({ keys: [k2], clock: now });
    const old = before.seal({ binding, data: 1 });
    expect(during.open(old, binding).keyId).toBe("k1");
    const fresh = during.seal({ binding, data: 2 });
    expect(fresh.split(".")[1]).toBe("k2");
    expect(before.open.bind(null, fresh, binding)).toThrow(StateError);
    expect(after.open(fresh, binding).data).toBe(2);
    expect(reasonOf(() => after.open(old, binding))).toBe("unknown_key");
  });

  it("opens tokens of either mode, so switching signed -> sealed breaks no call in flight", () => {
    const signed = createStateCodec({ keys: [k1], mode: "signed", clock: now });
    const sealed = createStateCodec({ keys: [k1], mode: "sealed", clock: now });
    expect(sealed.open(signed.seal({ binding, data: "s" }), binding).data).toBe("s");
    expect(signed.open(sealed.seal({ binding, data: "e" }), binding).data).toBe("e");
  });

  it("seals and opens states of every size, multi-byte text included, one after another", () => {
    // Small plaintexts are written into a scratch buffer the native backend reuses, large ones
    // into their own: each token must carry its own bytes, whatever was sealed before it.
    const native = createStateCodec({ keys: [k1], mode: "sealed", clock: now, maxTokenBytes: 4 * 1024 * 1024 });
    const portable = createStateCodec({ keys: [k1], mode: "sealed", clock: now, maxTokenBytes: 4 * 1024 * 1024, crypto: "portable" });
    const bodies = ["", "é∂😀\n", "x".repeat(20_000), "ü".repeat(60_000), "y".repeat(300_000), "z"];
    const tokens = bodies.map((body) => native.seal({ binding, data: body.length, body }));
    tokens.forEach((token, i) => {
      expect(native.open(token, binding).body).toBe(bodies[i]);
      expect(portable.open(token, binding).body).toBe(bodies[i]);
      expect(native.open(token, binding).data).toBe(bodies[i]!.length);
    });
  });

  it("native and portable crypto produce interchangeable tokens", () => {
    for (const mode of ["signed", "sealed"] as const) {
      const native = createStateCodec({ keys: [k1], mode, clock: now });
      const portable = createStateCodec({ keys: [k1], mode, clock: now, crypto: "portable" });
      expect(portable.open(native.seal({ binding, data: [1, 2] }), binding).data).toEqual([1, 2]);
      expect(native.open(portable.seal({ binding, data: [3] }), binding).data).toEqual([3]);
    }
  });

  it("refuses bad configuration when the codec is built", () => {
    expect(() => createStateCodec({ keys: [] })).toThrow(/at least one key/);
    expect(() => createStateCodec({ keys: [{ id: "short", secret: secret(1, 31) }] })).toThrow(/at least 32 bytes/);
    expect(() => createStateCodec({ keys: [k1, { id: "k1", secret: secret(3) }] })).toThrow(/duplicate id/);
    expect(() => createStateCodec({ keys: [{ id: "has.dot", secret: secret(1) }] })).toThrow(StateConfigError);
    expect(() => createStateCodec({ keys: [k1], ttlSeconds: 0 })).toThrow(/ttlSeconds/);
    expect(() => createStateCodec({ keys: [k1], maxTokenBytes: -1 })).toThrow(/maxTokenBytes/);
  });

  it("parses MCP_YIELD_KEYS", () => {
    const b64 = Buffer.from(secret(7)).toString("base64");
    const ring = parseKeyRing(`new:${b64}, old:${encodeBase64url(secret(8))}`);
    expect(ring.map((k) => k.id)).toEqual(["new", "old"]);
    expect(ring[0]!.secret).toEqual(secret(7));
    expect(() => parseKeyRing("")).toThrow(/no keys/);
    expect(() => parseKeyRing("nocolon")).toThrow(/id:base64secret/);
    expect(() => parseKeyRing("k:***")).toThrow(/not valid base64/);
  });
});

describe("base64url", () => {
  it("round-trips and refuses non-canonical text (property)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const text = encodeBase64url(bytes);
        expect(decodeBase64url(text)).toEqual(bytes);
      }),
    );
    expect(decodeBase64url("AB")).toBeUndefined(); // unused bits set
    expect(decodeBase64url("AQ")).toEqual(new Uint8Array([1]));
    expect(decodeBase64url("A")).toBeUndefined();
    expect(decodeBase64url("AQ==")).toBeUndefined();
    expect(decodeBase64url("A+B/")).toBeUndefined();
  });

  it("decodes exactly the canonical texts: base64url characters, a length other than 4n + 1, unused bits zero (property, against the rule written out)", () => {
    const VALUE = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const canonical = (t: string) => {
      if (![...t].every((c) => VALUE.includes(c)) || t.length % 4 === 1) return false;
      const last = VALUE.indexOf(t.at(-1) ?? "A");
      return t.length % 4 === 2 ? (last & 15) === 0 : t.length % 4 === 3 ? (last & 3) === 0 : true;
    };
    const chars = fc.constantFrom(..."AQgwBCDxyz019-_+/= .é\u0100");
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: chars, maxLength: 24 }),
          fc.uint8Array({ maxLength: 40 }).map((b) => encodeBase64url(b)),
        ),
        (text) => {
          const decoded = decodeBase64url(text);
          expect(decoded !== undefined).toBe(canonical(text));
          if (decoded !== undefined) expect(encodeBase64url(decoded)).toBe(text);
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe("the codec's clock", () => {
  it("a fractional clock (performance.timeOrigin + performance.now()) mints tokens it opens; times are whole milliseconds", () => {
    let now = 1_700_000_000_000.75;
    const codec = createStateCodec<{ n: number }>({ keys: [k1], clock: () => now, ttlSeconds: 60 });
    const minted = codec.mint({ binding, data: { n: 1 } });
    now += 0.5;
    const opened = codec.open(minted.token, binding);
    expect(opened.data).toEqual({ n: 1 });
    expect(opened.issuedAt).toBe(1_700_000_000_000);
    expect(opened.expiresAt).toBe(1_700_000_060_000);
    expect(codec.now()).toBe(1_700_000_000_001);
    // Expiry on the same whole-millisecond clock.
    now = 1_700_000_059_999.9;
    expect(reasonOf(() => codec.open(minted.token, binding))).toBe("accepted");
    now = 1_700_000_060_000.1;
    expect(reasonOf(() => codec.open(minted.token, binding))).toBe("expired");
  });

  it("a clock that returns no time is the server's misconfiguration, said as such when a token is minted", () => {
    for (const [value, shown] of [
      [Number.NaN, "NaN"],
      [-1, "-1"],
      [Number.POSITIVE_INFINITY, "Infinity"],
      ["1700000000000", "string"],
      [undefined, "undefined"],
    ] as const) {
      const codec = createStateCodec({ keys: [k1], clock: () => value as unknown as number });
      expect(() => codec.mint({ binding, data: 1 })).toThrow(StateConfigError);
      expect(() => codec.mint({ binding, data: 1 })).toThrow(`clock must return milliseconds since the epoch (a finite number ≥ 0), got ${shown}`);
    }
  });
});

describe("a fractional clock through the runtime", () => {
  it("a three-round call completes the same resumed, replayed, and alternating between two instances", async () => {
    let now = 1_700_000_000_000.25;
    const clock = () => now;
    const Num = z.object({ n: z.number() });
    const add = tool({
      name: "add",
      description: "",
      input: z.object({}),
      *run() {
        let sum = 0;
        for (let i = 0; i < 3; i++) {
          const a = yield* elicit(`number ${i}?`, Num);
          if (a.action === "accept") sum += a.content.n;
        }
        return `sum ${sum}`;
      },
    });
    const caps = { clientCapabilities: { elicitation: {} } };
    const drive = async (instances: ReturnType<typeof createRuntime>[]) => {
      let params: Record<string, unknown> = { name: "add", arguments: {} };
      for (let round = 0; ; round++) {
        now += 17.375;
        const r = (await instances[round % instances.length]!.callTool(add, params, caps)) as {
          resultType?: string;
          requestState?: string;
          inputRequests?: Record<string, unknown>;
          content?: Array<{ text: string }>;
        };
        if (r.resultType !== "input_required") return r.content![0]!.text;
        const [key] = Object.keys(r.inputRequests!);
        params = { name: "add", arguments: {}, requestState: r.requestState, inputResponses: { [key!]: { action: "accept", content: { n: round + 1 } } } };
      }
    };
    const make = (liveCalls: number) => createRuntime({ state: { keys: [k1], clock }, clock, liveCalls });
    expect(await drive([make(1000)])).toBe("sum 6"); // resumed
    expect(await drive([make(0)])).toBe("sum 6"); // replayed every round
    expect(await drive([make(1000), make(1000)])).toBe("sum 6"); // another instance each round
  });
});
