import { integerOption } from "../../util/options.js";
import { decodeCanonicalNative, decodeCheckedAlphabet, decodeUtf8, encodeBase64url, encodeTextBase64url, truncateBase64url } from "../base64url.js";
import { digestOf } from "../canonical.js";
import { type Claims, isClaims, type OpenedState, type StateBinding } from "./claims.js";
import { type CryptoBackend, constantTimeEqualText, defaultBackend, portableBackend } from "./crypto.js";
import { StateConfigError, StateError } from "../errors.js";
import { decodeData, encodeData } from "./payload.js";
import { numberJson, quoteJson } from "../json-text.js";
import { buildKeyRing, type DerivedKey, type StateKey } from "./keyring.js";
import { createTexts } from "./texts.js";

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
  /**
   * Milliseconds since the epoch; injectable for tests. A fraction is dropped (tokens carry
   * whole milliseconds), so `() => performance.timeOrigin + performance.now()` works too.
   */
  clock?: () => number;
  /** `portable` forces the pure-JS crypto (tests, benchmarks); default picks native when present. */
  crypto?: "auto" | "portable";
}

/** A requestState codec: seals data bound to one call into a token, and opens tokens presented for it. */
export interface StateCodec<T = unknown> {
  readonly mode: StateMode;
  readonly ttlSeconds: number;
  readonly maxTokenBytes: number;
  /**
   * Which crypto seals and opens: `node` (the runtime's `node:crypto`: Node, Bun, Deno, Workers
   * with nodejs_compat) or `portable` (pure JS, where `node:crypto` is absent). The bytes are the
   * same either way: tokens move between runtimes.
   */
  readonly crypto: "node" | "portable";
  /**
   * Mint a token binding `data` (and an optional raw text `body`, carried after it as it is)
   * to one call. Throws `StateError("too_large")` past the limit.
   */
  seal(claims: { binding: StateBinding; data: T; body?: string }): string;
  /** `seal`, with what was sealed: the nonce and the times (a caller that keeps tokens it minted uses them). */
  mint(claims: { binding: StateBinding; data: T; body?: string }): MintedState;
  /** Verify and decode; throws `StateError` with a stable `reason` on any failure. */
  open(token: unknown, expected: StateBinding): OpenedState<T>;
  /**
   * Verify a token's integrity (size, characters, key, tag) and read it, without checking
   * expiry or binding: for tools that show what a state holds (`npx mcp-yield inspect`). Never
   * use it to accept a state.
   */
  inspect(token: unknown): InspectedState<T>;
  /** The codec's clock (ms since the epoch): what expiry is measured against. */
  now(): number;
  /**
   * A short text made unforgeable for one `purpose` (a task's signal URL, ...): `<keyId>.<text
   * as base64url>.<HMAC>`, with a subkey of the ring's first key that no state token uses.
   * The same text always gives the same token under the same key.
   */
  signText(purpose: string, text: string): string;
  /** The text `signText(purpose, ...)` signed, or `undefined` for anything else (another purpose, a key not in the ring, altered). */
  verifyText(purpose: string, token: string): string | undefined;
  /**
   * A short text made unforgeable and unreadable for one `purpose` (a task's signal URL, which
   * must not name its task): `<keyId>.<iv ‖ AES-GCM>`, the IV a keyed hash of the text, so the
   * same text always gives the same token under the same key. Any key of the ring opens it.
   */
  sealText(purpose: string, text: string): string;
  /** The text `sealText(purpose, ...)` sealed, or `undefined` for anything else (another purpose, a key not in the ring, altered). */
  openText(purpose: string, token: string): string | undefined;
}

/** What `inspect` reads from an authentic token: its data and its claims, checked for nothing but integrity. */
export interface InspectedState<T> extends OpenedState<T> {
  /** Whether the token's expiry has passed (on the codec's clock). */
  expired: boolean;
  method: StateBinding["method"];
  /** Tool or prompt name, or resource uri. */
  target: string;
  /** SHA-256 of the canonical JSON of the arguments, base64url. */
  argumentsDigest: string;
  /** Whether a principal is bound (only its keyed hash is in the token). */
  principalBound: boolean;
}

/** A token just minted, and what it carries. */
export interface MintedState {
  token: string;
  nonce: string;
  issuedAt: number;
  expiresAt: number;
}

// Format 2 (y2): the claims JSON, a newline, then the body as raw text (JSON never contains a
// raw newline, so the first one ends the claims). Format 1 (y1, the claims alone) was replaced
// on the first day and never released: its tokens are refused as an unsupported version.
const SIGNED = "y2s";
const SEALED = "y2e";
const IV_BYTES = 12;
const GCM_TAG_BYTES = 16;
const TOKEN_CHARS = /^[A-Za-z0-9_.-]*$/;
/** A segment besides the payload (version, key id, MAC): short, so its characters are checked by TOKEN_CHARS' class. */
const SEGMENT_CHARS = /^[A-Za-z0-9_-]*$/;
const LOOKS_VERSIONED = /^y\d+[a-z]$/;
const encoder = new TextEncoder();

const positiveInt = (name: string, value: number | undefined, fallback: number) => integerOption(name, value, fallback, 1, (m) => new StateConfigError(m));

/**
 * Codecs made by `createStateCodec`: their tokens are base64url and dots (`open` refuses any
 * other character), so a token one of them minted can be written into JSON as it is. A codec
 * an application brings itself promises nothing of the kind.
 */
const ownCodecs = new WeakSet<object>();

/** Whether `codec` was made by `createStateCodec` (its tokens need no escaping in JSON). */
export const mintsBase64urlTokens = (codec: object): boolean => ownCodecs.has(codec);

/** A codec's own `mint` for data given as plain JSON text (see `mintJson` in `createStateCodec`). */
export type JsonMinter = (binding: StateBinding, dataJson: string, body: string) => MintedState;
const jsonMinters = new WeakMap<object, JsonMinter>();

/** `codec`'s minter for data as JSON text, when `createStateCodec` made it; `undefined` for any other codec. */
export const jsonMinterOf = (codec: object): JsonMinter | undefined => jsonMinters.get(codec);

/** Create a requestState codec. See README "The requestState codec" for format and guarantees. */
export function createStateCodec<T = unknown>(options: StateCodecOptions): StateCodec<T> {
  const backend: CryptoBackend = options.crypto === "portable" ? portableBackend : defaultBackend;
  const ring = buildKeyRing(options.keys, backend);
  const byId = new Map(ring.map((k) => [k.id, k] as const));
  const ttlSeconds = positiveInt("ttlSeconds", options.ttlSeconds, 600);
  const maxTokenBytes = positiveInt("maxTokenBytes", options.maxTokenBytes, 65536);
  const mode: StateMode = options.mode ?? "sealed";
  if (mode !== "signed" && mode !== "sealed") throw new StateConfigError(`mode must be "signed" or "sealed"`);
  const clock = options.clock === undefined ? Date.now : wholeMilliseconds(options.clock);
  const signer = ring[0]!;

  const principalHash = (key: DerivedKey, principal: string) => truncateBase64url(backend.hmacSha256Base64url(key.principal, principal), 16);

  // The sealed header `<version>.<keyId>` is the associated data: computed once per key and version.
  const aad = new Map<string, Uint8Array>(ring.flatMap((k) => [SEALED].map((v) => [`${v}.${k.id}`, encoder.encode(`${v}.${k.id}`)] as const)));
  const aadOf = (version: string, key: DerivedKey) => aad.get(`${version}.${key.id}`)!;
  const macOf = (key: DerivedKey, signedPart: string) => backend.hmacSha256Base64url(key.mac, signedPart);
  // Principal hashes, cached: the same principal is hashed again every round of its calls.
  const principals = new Map<string, string>();
  const principalTag = (key: DerivedKey, principal: string) => {
    const id = `${key.id}\0${principal}`;
    let tag = principals.get(id);
    if (tag === undefined) {
      if (principals.size >= 4096) principals.clear();
      principals.set(id, (tag = principalHash(key, principal)));
    }
    return tag;
  };

  function mint({ binding, data, body }: { binding: StateBinding; data: T; body?: string }): MintedState {
    const now = clock();
    const claims: Claims = {
      iat: now,
      exp: now + ttlSeconds * 1000,
      m: binding.method,
      t: binding.target,
      a: binding.argumentsDigest ?? digestOf(binding.arguments ?? {}),
      n: encodeBase64url(backend.randomBytes(12)),
      d: undefined,
    };
    // Written out, not spread: object spread is measurably slow on this per-round path.
    const encoded = encodeData(data);
    claims.d = encoded.d;
    if (encoded.sj !== undefined) claims.sj = encoded.sj;
    if (encoded.x !== undefined) claims.x = encoded.x;
    if (binding.principal !== undefined) claims.p = principalTag(signer, binding.principal);
    return sealPlaintext(`${JSON.stringify(claims)}\n${body ?? ""}`, claims.n, now, claims.exp);
  }

  /**
   * `mint` for data given as its JSON text, which the caller vouches is plain JSON (an object
   * `encodeData` would carry as it is: no superjson, nothing escaped). The claims are written
   * as the text `JSON.stringify` makes of `mint`'s claims object, member for member, so the
   * token reads back exactly as `mint`'s would. The runtime's header is such data every round:
   * walking it to prove it plain, then stringifying it nested, was ≈ 1 µs of each round's mint.
   */
  function mintJson(binding: StateBinding, dataJson: string, body: string): MintedState {
    const now = clock();
    const exp = now + ttlSeconds * 1000;
    const n = encodeBase64url(backend.randomBytes(12));
    const a = binding.argumentsDigest ?? digestOf(binding.arguments ?? {});
    const p = binding.principal === undefined ? "" : `,"p":${quoteJson(principalTag(signer, binding.principal))}`;
    return sealPlaintext(
      `{"iat":${numberJson(now)},"exp":${numberJson(exp)},"m":${quoteJson(binding.method)},"t":${quoteJson(binding.target)},"a":${quoteJson(a)},"n":${quoteJson(n)},"d":${dataJson}${p}}\n${body}`,
      n,
      now,
      exp,
    );
  }

  function sealPlaintext(plaintext: string, nonce: string, issuedAt: number, expiresAt: number): MintedState {
    let token: string;
    if (mode === "signed") {
      const signedPart = `${SIGNED}.${signer.id}.${encodeTextBase64url(plaintext)}`;
      token = `${signedPart}.${macOf(signer, signedPart)}`;
    } else {
      const sealed = backend.aesGcmSeal(signer.aead, backend.randomBytes(IV_BYTES), plaintext, aadOf(SEALED, signer));
      token = `${SEALED}.${signer.id}.${encodeBase64url(sealed)}`;
    }
    if (token.length > maxTokenBytes) {
      throw new StateError("too_large", `requestState would be ${token.length} bytes, over the ${maxTokenBytes}-byte limit`);
    }
    return { token, nonce, issuedAt, expiresAt };
  }

  /** Verify the token's integrity and return the plaintext bytes and the key that opened them. */
  function verify(token: string, segments: string[], payload: Uint8Array | undefined): { plaintext: Uint8Array; key: DerivedKey } {
    const version = segments[0]!;
    const signed = version === SIGNED;
    if (!signed && version !== SEALED) {
      if (LOOKS_VERSIONED.test(version)) throw new StateError("unsupported_version", `requestState version "${version}" is not supported`);
      throw new StateError("malformed", "requestState is not a token this server issued");
    }
    const expectedSegments = signed ? 4 : 3;
    if (segments.length !== expectedSegments || segments.some((s) => s === "")) {
      throw new StateError("malformed", "requestState has the wrong number of segments");
    }
    const key = byId.get(segments[1]!);
    if (!key) throw new StateError("unknown_key", "requestState was sealed with a key this server does not hold");

    if (signed) {
      const tag = segments[3]!;
      const signedPart = token.slice(0, token.length - tag.length - 1);
      // Compared as text with the canonical encoding: a tag whose unused bits differ is refused,
      // not read as the same tag.
      if (!constantTimeEqualText(macOf(key, signedPart), tag)) {
        throw new StateError("bad_signature", "requestState failed verification");
      }
      const plaintext = payload ?? decodeCheckedAlphabet(segments[2]!);
      if (!plaintext) throw new StateError("malformed", "requestState payload is not base64url");
      return { plaintext, key };
    }
    const sealed = payload ?? decodeCheckedAlphabet(segments[2]!);
    if (!sealed || sealed.length < IV_BYTES + GCM_TAG_BYTES) throw new StateError("bad_signature", "requestState failed verification");
    const plaintext = backend.aesGcmOpen(key.aead, sealed.subarray(0, IV_BYTES), sealed.subarray(IV_BYTES), aadOf(version, key));
    if (!plaintext) throw new StateError("bad_signature", "requestState failed verification");
    return { plaintext, key };
  }

  /** The claims (checked by hand: this runs every round) and the body after them. */
  function decodeClaims(plaintext: Uint8Array): { claims: Claims; body: string | undefined } {
    try {
      const text = decodeUtf8(plaintext);
      const end = text.indexOf("\n");
      if (end !== -1) {
        const claims = JSON.parse(text.slice(0, end)) as unknown;
        if (isClaims(claims)) return { claims, body: text.slice(end + 1) };
      }
    } catch {
      // fall through: an authentic token that does not decode is still malformed
    }
    throw new StateError("malformed", "requestState payload could not be decoded");
  }

  /** Size, characters, integrity, then the claims: what every reading of a token checks first. */
  function authentic(token: unknown): { claims: Claims; body: string | undefined; key: DerivedKey } {
    if (typeof token !== "string") throw new StateError("malformed", "requestState must be a string");
    // Size first: nothing about an oversized token is decoded or hashed.
    if (token.length > maxTokenBytes) throw new StateError("too_large", `requestState is over the ${maxTokenBytes}-byte limit`);
    // Every character base64url or a dot, before anything is opened. The payload segment (all but
    // a few dozen of the characters) is checked by decoding it, which opening needs anyway, and
    // encoding it back; the rest by their class. Anything else (a payload that is not
    // canonical, the wrong number of segments, no Buffer) is checked as a whole, as before.
    const segments = token.split(".");
    const payload = segments.length === 3 || segments.length === 4 ? decodeCanonicalNative(segments[2]!) : undefined;
    const charsOk =
      payload !== undefined ? SEGMENT_CHARS.test(segments[0]!) && SEGMENT_CHARS.test(segments[1]!) && (segments.length === 3 || SEGMENT_CHARS.test(segments[3]!)) : TOKEN_CHARS.test(token);
    if (!charsOk) throw new StateError("malformed", "requestState contains characters outside base64url");
    const { plaintext, key } = verify(token, segments, payload);
    const { claims, body } = decodeClaims(plaintext);
    return { claims, body, key };
  }

  function dataOf(claims: Claims): T {
    try {
      return decodeData(claims) as T;
    } catch {
      throw new StateError("malformed", "requestState payload could not be decoded");
    }
  }

  function open(token: unknown, expected: StateBinding): OpenedState<T> {
    const { claims, body, key } = authentic(token);
    if (clock() >= claims.exp) throw new StateError("expired", "requestState has expired; start the call again");
    const mismatch =
      claims.m !== expected.method || claims.t !== expected.target
        ? "another tool, prompt or resource"
        : claims.a !== (expected.argumentsDigest ?? digestOf(expected.arguments ?? {}))
          ? "other arguments"
          : (claims.p ?? "") !== (expected.principal === undefined ? "" : principalTag(key, expected.principal))
            ? "another principal"
            : undefined;
    if (mismatch) throw new StateError("wrong_binding", `requestState belongs to a call with ${mismatch}`);
    const data = dataOf(claims);
    const opened: OpenedState<T> = { data, issuedAt: claims.iat, expiresAt: claims.exp, nonce: claims.n, keyId: key.id };
    if (body !== undefined) opened.body = body;
    return opened;
  }

  function inspect(token: unknown): InspectedState<T> {
    const { claims, body, key } = authentic(token);
    return {
      data: dataOf(claims),
      issuedAt: claims.iat,
      expiresAt: claims.exp,
      expired: clock() >= claims.exp,
      nonce: claims.n,
      keyId: key.id,
      method: claims.m,
      target: claims.t,
      argumentsDigest: claims.a,
      principalBound: claims.p !== undefined,
      ...(body !== undefined ? { body } : {}),
    };
  }

  const { signText, verifyText, sealText, openText } = createTexts({ backend, signer, byId, maxTokenBytes });

  const codec: StateCodec<T> = {
    mode,
    ttlSeconds,
    maxTokenBytes,
    crypto: backend.name,
    seal: (claims) => mint(claims).token,
    mint,
    open,
    inspect,
    now: clock,
    signText,
    verifyText,
    sealText,
    openText,
  };
  ownCodecs.add(codec);
  jsonMinters.set(codec, mintJson);
  return codec;
}

/**
 * A clock read in whole milliseconds. Tokens carry their times as integers: a fractional clock
 * (performance.timeOrigin + performance.now()) once minted tokens that the same codec then
 * refused as malformed. Anything but a finite, non-negative number is the server's
 * misconfiguration, said as such rather than minted into a token no one can open.
 */
function wholeMilliseconds(clock: () => number): () => number {
  return () => {
    const now = clock();
    if (typeof now !== "number" || !Number.isFinite(now) || now < 0)
      throw new StateConfigError(`clock must return milliseconds since the epoch (a finite number ≥ 0), got ${typeof now === "number" ? String(now) : typeof now}`);
    return Math.floor(now);
  };
}
