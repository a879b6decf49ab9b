import { decodeCheckedAlphabet, decodeUtf8, encodeBase64url, encodeTextBase64url } from "./base64url.js";
import { digestOf } from "./canonical.js";
import { type Claims, claimsSchema, type OpenedState, type StateBinding } from "./claims.js";
import { type CryptoBackend, constantTimeEqual, defaultBackend, portableBackend } from "./crypto.js";
import { StateConfigError, StateError } from "./errors.js";
import { decodeData, encodeData } from "./payload.js";
import { buildKeyRing, type DerivedKey, type StateKey } from "./keyring.js";

/** `signed`: HMAC-SHA256, payload readable by the client. `sealed`: AES-256-GCM, payload hidden. */
export type StateMode = "signed" | "sealed";

/** Options of `createStateCodec`. */
export interface StateCodecOptions {
  /** Key ring: the first key seals, every key opens. Each secret ≥ 32 bytes. */
  keys: readonly StateKey[];
  /** Lifetime of a token; every round mints a fresh one. Default 600 (10 minutes). */
  ttlSeconds?: number;
  /** Tokens longer than this are refused before any decoding or crypto. Default 65536. */
  maxTokenBytes?: number;
  /** Default `sealed`: journals hold server-private step results. */
  mode?: StateMode;
  /** Milliseconds since the epoch; injectable for tests. */
  clock?: () => number;
  /** `portable` forces the pure-JS crypto (tests, benchmarks); default picks native when present. */
  crypto?: "auto" | "portable";
}

/** A requestState codec: seals data bound to one call into a token, and opens tokens presented for it. */
export interface StateCodec<T = unknown> {
  readonly mode: StateMode;
  readonly ttlSeconds: number;
  readonly maxTokenBytes: number;
  /** Mint a token binding `data` to one call. Throws `StateError("too_large")` past the limit. */
  seal(claims: { binding: StateBinding; data: T }): string;
  /** Verify and decode; throws `StateError` with a stable `reason` on any failure. */
  open(token: unknown, expected: StateBinding): OpenedState<T>;
}

const SIGNED = "y1s";
const SEALED = "y1e";
const IV_BYTES = 12;
const GCM_TAG_BYTES = 16;
const TOKEN_CHARS = /^[A-Za-z0-9_.-]*$/;
const LOOKS_VERSIONED = /^y\d+[a-z]$/;
const encoder = new TextEncoder();

function positiveInt(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) throw new StateConfigError(`${name} must be a positive integer`);
  return value;
}

/** Create a requestState codec. See README "The requestState codec" for format and guarantees. */
export function createStateCodec<T = unknown>(options: StateCodecOptions): StateCodec<T> {
  const backend: CryptoBackend = options.crypto === "portable" ? portableBackend : defaultBackend;
  const ring = buildKeyRing(options.keys, backend);
  const byId = new Map(ring.map((k) => [k.id, k] as const));
  const ttlSeconds = positiveInt("ttlSeconds", options.ttlSeconds, 600);
  const maxTokenBytes = positiveInt("maxTokenBytes", options.maxTokenBytes, 65536);
  const mode: StateMode = options.mode ?? "sealed";
  if (mode !== "signed" && mode !== "sealed") throw new StateConfigError(`mode must be "signed" or "sealed"`);
  const clock = options.clock ?? Date.now;
  const signer = ring[0]!;

  const principalHash = (key: DerivedKey, principal: string) =>
    encodeBase64url(backend.hmacSha256(key.principal, principal).subarray(0, 16));

  // The sealed header `y1e.<keyId>` is the associated data: computed once per key.
  const aad = new Map(ring.map((k) => [k.id, encoder.encode(`${SEALED}.${k.id}`)] as const));
  const aadOf = (key: DerivedKey) => aad.get(key.id)!;
  const macOf = (key: DerivedKey, signedPart: string) => backend.hmacSha256(key.mac, signedPart);

  function seal({ binding, data }: { binding: StateBinding; data: T }): string {
    const now = clock();
    const claims: Claims = {
      iat: now,
      exp: now + ttlSeconds * 1000,
      m: binding.method,
      t: binding.target,
      a: binding.argumentsDigest ?? digestOf(binding.arguments ?? {}),
      n: encodeBase64url(backend.randomBytes(12)),
      ...encodeData(data),
    };
    if (binding.principal !== undefined) claims.p = principalHash(signer, binding.principal);
    const json = JSON.stringify(claims);
    let token: string;
    if (mode === "signed") {
      const signedPart = `${SIGNED}.${signer.id}.${encodeTextBase64url(json)}`;
      token = `${signedPart}.${encodeBase64url(macOf(signer, signedPart))}`;
    } else {
      const body = backend.aesGcmSeal(signer.aead, backend.randomBytes(IV_BYTES), json, aadOf(signer));
      token = `${SEALED}.${signer.id}.${encodeBase64url(body)}`;
    }
    if (token.length > maxTokenBytes) {
      throw new StateError("too_large", `requestState would be ${token.length} bytes, over the ${maxTokenBytes}-byte limit`);
    }
    return token;
  }

  /** Verify the token's integrity and return the plaintext bytes and the key that opened them. */
  function verify(token: string): { plaintext: Uint8Array; key: DerivedKey } {
    const segments = token.split(".");
    const version = segments[0]!;
    if (version !== SIGNED && version !== SEALED) {
      if (LOOKS_VERSIONED.test(version)) throw new StateError("unsupported_version", `requestState version "${version}" is not supported`);
      throw new StateError("malformed", "requestState is not a token this server issued");
    }
    const expectedSegments = version === SIGNED ? 4 : 3;
    if (segments.length !== expectedSegments || segments.some((s) => s === "")) {
      throw new StateError("malformed", "requestState has the wrong number of segments");
    }
    const key = byId.get(segments[1]!);
    if (!key) throw new StateError("unknown_key", "requestState was sealed with a key this server does not hold");

    if (version === SIGNED) {
      const tag = segments[3]!;
      const signedPart = token.slice(0, token.length - tag.length - 1);
      // Strict decoding: a tag whose unused bits differ is refused, not read as the same tag.
      const given = decodeCheckedAlphabet(tag);
      if (!given || !constantTimeEqual(macOf(key, signedPart), given)) {
        throw new StateError("bad_signature", "requestState failed verification");
      }
      const plaintext = decodeCheckedAlphabet(segments[2]!);
      if (!plaintext) throw new StateError("malformed", "requestState payload is not base64url");
      return { plaintext, key };
    }
    const body = decodeCheckedAlphabet(segments[2]!);
    if (!body || body.length < IV_BYTES + GCM_TAG_BYTES) throw new StateError("bad_signature", "requestState failed verification");
    const plaintext = backend.aesGcmOpen(key.aead, body.subarray(0, IV_BYTES), body.subarray(IV_BYTES), aadOf(key));
    if (!plaintext) throw new StateError("bad_signature", "requestState failed verification");
    return { plaintext, key };
  }

  function decodeClaims(plaintext: Uint8Array): Claims {
    try {
      const parsed = claimsSchema.safeParse(JSON.parse(decodeUtf8(plaintext)));
      if (parsed.success) return parsed.data;
    } catch {
      // fall through: an authentic token that does not decode is still malformed
    }
    throw new StateError("malformed", "requestState payload could not be decoded");
  }

  function open(token: unknown, expected: StateBinding): OpenedState<T> {
    if (typeof token !== "string") throw new StateError("malformed", "requestState must be a string");
    // Size first: nothing about an oversized token is decoded or hashed.
    if (token.length > maxTokenBytes) throw new StateError("too_large", `requestState is over the ${maxTokenBytes}-byte limit`);
    if (!TOKEN_CHARS.test(token)) throw new StateError("malformed", "requestState contains characters outside base64url");
    const { plaintext, key } = verify(token);
    const claims = decodeClaims(plaintext);
    if (clock() >= claims.exp) throw new StateError("expired", "requestState has expired; start the call again");
    const mismatch =
      claims.m !== expected.method || claims.t !== expected.target
        ? "another tool, prompt or resource"
        : claims.a !== (expected.argumentsDigest ?? digestOf(expected.arguments ?? {}))
          ? "other arguments"
          : (claims.p ?? "") !== (expected.principal === undefined ? "" : principalHash(key, expected.principal))
            ? "another principal"
            : undefined;
    if (mismatch) throw new StateError("wrong_binding", `requestState belongs to a call with ${mismatch}`);
    let data: T;
    try {
      data = decodeData(claims) as T;
    } catch {
      throw new StateError("malformed", "requestState payload could not be decoded");
    }
    return { data, issuedAt: claims.iat, expiresAt: claims.exp, nonce: claims.n, keyId: key.id };
  }

  return { mode, ttlSeconds, maxTokenBytes, seal, open };
}
