import { z } from "zod";

/** What a state is bound to: the one call it belongs to. */
export interface StateBinding {
  method: "tools/call" | "prompts/get" | "resources/read";
  /** Tool or prompt name, or resource uri. */
  target: string;
  /** The call's arguments; bound as a SHA-256 digest of their canonical JSON. */
  arguments?: unknown;
  /** The authenticated principal, if any; stored only as a keyed hash. */
  principal?: string;
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
  /** 2, or 1 for a token minted in the earlier format (`y1`). */
  format: 1 | 2;
  /** The raw text sealed after the data (format 2), if any was. */
  body?: string;
}

/** The payload inside a token. Short member names keep tokens small. */
export const claimsSchema = z.object({
  iat: z.number().int().nonnegative(),
  exp: z.number().int().nonnegative(),
  m: z.enum(["tools/call", "prompts/get", "resources/read"]),
  t: z.string(),
  a: z.string(),
  p: z.string().optional(),
  n: z.string(),
  /** The data: plain JSON, or superjson's `json` part when `sj` is present. */
  d: z.unknown(),
  /** superjson metadata for `d` (Dates, Maps, Sets, BigInts, undefined, escaped keys). */
  sj: z.unknown().optional(),
  /** Set when reserved keys in `d` were escaped (see reserved-keys.ts). */
  x: z.literal(1).optional(),
});
export type Claims = z.infer<typeof claimsSchema>;

