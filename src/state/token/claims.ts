import { MULTI_ROUND_METHODS, type MultiRoundMethod } from "../../wire/params.js";

/** What a state is bound to: the one call it belongs to. */
export interface StateBinding {
  method: MultiRoundMethod;
  /** Tool or prompt name, or resource uri. */
  target: string;
  /** The call's arguments; bound as a SHA-256 digest of their canonical JSON. */
  arguments?: unknown | undefined;
  /** The authenticated principal, if any; stored only as a keyed hash. */
  principal?: string | undefined;
  /**
   * `digestOf(arguments)` when the caller already has it (the runtime computes it once per
   * round for both open and seal); must match `arguments`.
   */
  argumentsDigest?: string;
}

/** What `open` hands back. */
export interface OpenedState<T> {
  data: T;
  /** Milliseconds since the epoch. */
  issuedAt: number;
  expiresAt: number;
  /** Random per token; a stable id for the round that minted it. */
  nonce: string;
  /** Id of the key that opened it (for rotation metrics). */
  keyId: string;
  /** The raw text sealed after the data, if any was. */
  body?: string;
}

/**
 * The payload inside a token. Short member names keep tokens small. Checked by `isClaims` after
 * the MAC or AEAD tag verified: the one place that says what a well-formed payload is.
 */
export interface Claims {
  /** Issued at, ms since the epoch. */
  iat: number;
  /** Expires at, ms since the epoch. */
  exp: number;
  /** The method the state is bound to. */
  m: MultiRoundMethod;
  /** Tool or prompt name, or resource uri. */
  t: string;
  /** Digest of the canonical arguments. */
  a: string;
  /** Keyed hash of the principal, when bound to one. */
  p?: string;
  /** Random per token. */
  n: string;
  /** The data: plain JSON, or superjson's `json` part when `sj` is present. */
  d: unknown;
  /** superjson metadata for `d` (Dates, Maps, Sets, BigInts, undefined, escaped keys). */
  sj?: unknown;
  /** Set when reserved keys in `d` were escaped (see reserved-keys.ts). */
  x?: 1;
}

const METHODS: ReadonlySet<unknown> = new Set(MULTI_ROUND_METHODS);
const isTime = (v: unknown) => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

/** Whether a decoded payload has the claims' shape (hand-checked: it runs on every round). */
export function isClaims(v: unknown): v is Claims {
  if (typeof v !== "object" || v === null) return false;
  const c = v as Record<string, unknown>;
  return (
    isTime(c.iat) &&
    isTime(c.exp) &&
    METHODS.has(c.m) &&
    typeof c.t === "string" &&
    typeof c.a === "string" &&
    (c.p === undefined || typeof c.p === "string") &&
    typeof c.n === "string" &&
    "d" in c &&
    (c.x === undefined || c.x === 1)
  );
}
