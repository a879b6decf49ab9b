import { z } from "zod";
import { digestOf, encodeBase64url, randomBytes } from "../state/index.js";
import type { Store } from "../store/index.js";
import { ErrorCode, ProtocolError } from "../wire/index.js";
import type { StatePayload } from "./journal.js";

/** What the token carries instead of a spilled journal: where it is, and the digest of its text. */
const spilled = z.object({ sp: z.string(), h: z.string() });

/** Roughly the JSON size of a payload, without serializing it (records dominate). */
function estimate(payload: StatePayload): number {
  let bytes = 64 + payload.c.length;
  for (const [fp, value] of payload.j) bytes += fp.length + value.length + 8;
  for (const [k, fp] of Object.entries(payload.o)) bytes += k.length + fp.length + 6;
  if (payload.p) for (const [k, v] of Object.entries(payload.p)) bytes += k.length + v.length + 6;
  return bytes;
}

/**
 * Large states, spilled to the store: past `thresholdBytes` a journal is kept in the store for
 * the state's lifetime and the token seals a reference and the SHA-256 of the stored text
 * (bound like any state: method, target, arguments, principal). A call never fails on the
 * token's size limit because a step returned a lot; the token stays small.
 */
export function createSpill({ store, thresholdBytes, ttlMs }: { store: Store | undefined; thresholdBytes: number; ttlMs: number }) {
  return {
    /** The data to seal for `payload`: the payload itself, or a reference to it in the store. */
    async seal(payload: StatePayload): Promise<unknown> {
      if (store === undefined || estimate(payload) <= thresholdBytes) return payload;
      const text = JSON.stringify(payload);
      const id = encodeBase64url(randomBytes(16));
      await store.set(`state:${id}`, text, ttlMs);
      return { sp: id, h: digestOf(text) };
    },
    /** Whether sealed data is a reference (the payload must be fetched). */
    isSpilled(data: unknown): boolean {
      return typeof data === "object" && data !== null && "sp" in data;
    },
    /** The payload a reference points to; an expired or altered entry is refused like a bad state. */
    async open(data: unknown): Promise<unknown> {
      const ref = spilled.safeParse(data);
      if (!ref.success) return data;
      if (store === undefined) throw new ProtocolError(ErrorCode.InvalidParams, "Invalid requestState: it refers to a stored journal, and this server has no store", { reason: "malformed" });
      const text = await store.get(`state:${ref.data.sp}`);
      if (text === undefined) throw new ProtocolError(ErrorCode.InvalidParams, "Invalid requestState: its stored journal has expired; start the call again", { reason: "expired" });
      if (digestOf(text) !== ref.data.h) throw new ProtocolError(ErrorCode.InvalidParams, "Invalid requestState: its stored journal does not match", { reason: "malformed" });
      return JSON.parse(text) as unknown;
    },
  };
}

export type Spill = ReturnType<typeof createSpill>;
