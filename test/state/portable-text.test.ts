import { afterEach, describe, expect, it, vi } from "vitest";

// Signed texts (signal tokens) on the codec's portable path — a runtime with no Buffer, where
// UTF-8 is decoded by a fatal TextDecoder: a forged token whose body is not UTF-8 is refused as
// on Node (`undefined`: the signal route's 404), never thrown (a 500).

const saved = (globalThis as { Buffer?: unknown }).Buffer;
afterEach(() => {
  (globalThis as { Buffer?: unknown }).Buffer = saved;
  vi.resetModules();
});

/**
 * The package's codec with its UTF-8 and base64url helpers loaded as a runtime without Buffer
 * loads them (the module evaluated afresh while Buffer is absent; the rest of the package, whose
 * native crypto path needs Buffer, loaded after it is back, so only the helpers are portable).
 */
async function codecWithoutBuffer() {
  vi.resetModules();
  delete (globalThis as { Buffer?: unknown }).Buffer;
  const helpers = await import("../../src/state/base64url.js");
  (globalThis as { Buffer?: unknown }).Buffer = saved;
  const { createStateCodec } = await import("mcp-yield");
  const codec = createStateCodec({ keys: [{ id: "k1", secret: new Uint8Array(32).fill(7) }], crypto: "portable" });
  return { codec, helpers };
}

describe("signed texts without Buffer", () => {
  it("a forged body that is not UTF-8 is refused, not thrown", async () => {
    const { codec, helpers } = await codecWithoutBuffer();
    // The helpers decode as a runtime without Buffer does: bad UTF-8 throws there.
    expect(() => helpers.decodeUtf8(new Uint8Array([0xff]))).toThrow();
    const good = codec.signText("task-signal", '{"t":"x"}');
    expect(codec.verifyText("task-signal", good)).toBe('{"t":"x"}');
    const [id, , mac] = good.split(".");
    const forged = `${id}.${helpers.encodeBase64url(new Uint8Array([0xff, 0xfe, 0x80]))}.${mac}`;
    expect(() => codec.verifyText("task-signal", forged)).not.toThrow();
    expect(codec.verifyText("task-signal", forged)).toBeUndefined();
  });
});
