import { gcm } from "@noble/ciphers/aes.js";
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { randomBytes } from "./random.js";

/**
 * The few primitives the codec needs. On Node the native `node:crypto` is used (measured
 * ≈ 1.9× faster for HMAC and ≈ 6× for AES-GCM than the audited pure-JS @noble libraries);
 * elsewhere (Workers, Deno, browsers) the @noble implementations serve. Both produce the same
 * bytes, so tokens move freely between runtimes.
 */
export interface CryptoBackend {
  readonly name: "node" | "portable";
  /** HMAC-SHA256 of bytes, or of a string's UTF-8 encoding. */
  hmacSha256(key: Uint8Array, data: Uint8Array | string): Uint8Array;
  /** SHA-256 of bytes, or of a string's UTF-8 encoding. */
  sha256(data: Uint8Array | string): Uint8Array;
  /** AES-256-GCM of bytes or of a string's UTF-8 encoding: returns iv ‖ ciphertext ‖ 16-byte tag. */
  aesGcmSeal(key: Uint8Array, iv: Uint8Array, plaintext: Uint8Array | string, aad: Uint8Array): Uint8Array;
  /** AES-256-GCM open; `undefined` when the tag does not verify. */
  aesGcmOpen(key: Uint8Array, iv: Uint8Array, sealed: Uint8Array, aad: Uint8Array): Uint8Array | undefined;
  randomBytes(length: number): Uint8Array;
}

const GCM_TAG_BYTES = 16;
const utf8 = new TextEncoder();

/** The pure-JS backend (@noble/hashes + @noble/ciphers). */
export const portableBackend: CryptoBackend = {
  name: "portable",
  hmacSha256: (key, data) => hmac(sha256, key, typeof data === "string" ? utf8.encode(data) : data),
  sha256: (data) => sha256(typeof data === "string" ? utf8.encode(data) : data),
  aesGcmSeal: (key, iv, plaintext, aad) => {
    const sealed = gcm(key, iv, aad).encrypt(typeof plaintext === "string" ? utf8.encode(plaintext) : plaintext);
    const out = new Uint8Array(iv.length + sealed.length);
    out.set(iv, 0);
    out.set(sealed, iv.length);
    return out;
  },
  aesGcmOpen: (key, iv, sealed, aad) => {
    try {
      return gcm(key, iv, aad).decrypt(sealed);
    } catch {
      return undefined;
    }
  },
  randomBytes,
};

type NodeCrypto = typeof import("node:crypto");

function loadNodeCrypto(): NodeCrypto | undefined {
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  return proc?.getBuiltinModule?.("node:crypto") as NodeCrypto | undefined;
}

type OneShotHash = (algorithm: string, data: Uint8Array | string, encoding: "buffer") => Buffer;

function makeNodeBackend(c: NodeCrypto): CryptoBackend {
  // crypto.hash (Node ≥ 20.12) skips the Hash object: ≈ 8× faster than createHash on the short
  // inputs fingerprints and argument digests hash.
  const oneShot = (c as unknown as { hash?: OneShotHash }).hash;
  return {
    name: "node",
    hmacSha256: (key, data) => new Uint8Array(c.createHmac("sha256", key).update(data).digest()),
    sha256: oneShot
      ? (data) => new Uint8Array(oneShot("sha256", data, "buffer"))
      : (data) => new Uint8Array(c.createHash("sha256").update(data).digest()),
    aesGcmSeal: (key, iv, plaintext, aad) => {
      const cipher = c.createCipheriv("aes-256-gcm", key, iv);
      cipher.setAAD(aad);
      // Buffer.from + update(bytes) measured faster than update(string, "utf8").
      const head = cipher.update(typeof plaintext === "string" ? Buffer.from(plaintext, "utf8") : plaintext);
      const tail = cipher.final();
      return Buffer.concat([iv, head, tail, cipher.getAuthTag()]);
    },
    aesGcmOpen: (key, iv, sealed, aad) => {
      if (sealed.length < GCM_TAG_BYTES) return undefined;
      try {
        const decipher = c.createDecipheriv("aes-256-gcm", key, iv, { authTagLength: GCM_TAG_BYTES });
        decipher.setAAD(aad);
        decipher.setAuthTag(sealed.subarray(sealed.length - GCM_TAG_BYTES));
        const head = decipher.update(sealed.subarray(0, sealed.length - GCM_TAG_BYTES));
        const tail = decipher.final(); // throws when the tag does not verify
        return tail.length === 0 ? head : Buffer.concat([head, tail]);
      } catch {
        return undefined;
      }
    },
    randomBytes,
  };
}

const nodeCrypto = loadNodeCrypto();

/** The native backend where `node:crypto` is available, else `undefined`. */
export const nodeBackend: CryptoBackend | undefined = nodeCrypto ? makeNodeBackend(nodeCrypto) : undefined;

/** The fastest backend this runtime offers. */
export const defaultBackend: CryptoBackend = nodeBackend ?? portableBackend;

/** Compare two equal-purpose byte strings without an early exit (length is not secret). */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  if (nodeCrypto) return nodeCrypto.timingSafeEqual(a, b);
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}
