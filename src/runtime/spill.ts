import { digestOf, encodeBase64url, randomBytes } from "../state/index.js";
import type { PrincipalBytes, Store } from "../store/index.js";
import { ErrorCode, ProtocolError } from "../wire/index.js";
import { isSpillRef, type SpillRef } from "../journal/spill-ref.js";

export type { SpillRef } from "../journal/spill-ref.js";

/**
 * Large states, spilled to the store: past `thresholdBytes` a journal's text is kept in the
 * store for the state's lifetime and the token seals a reference and the SHA-256 of that text
 * (bound like any state: method, target, arguments, principal). A call never fails on the
 * token's size limit because a step returned a lot; the token stays small.
 */
export function createSpill({ store, bytes, thresholdBytes, ttlMs }: { store: Store | undefined; bytes: PrincipalBytes; thresholdBytes: number; ttlMs: number }) {
  const spills = (text: string) => store !== undefined && text.length > thresholdBytes;
  return {
    /** Whether `seal` would keep this journal text in the store (else the token carries it). */
    spills,
    /**
     * The journal text as the token will carry it: itself, or (large, with a store) a reference.
     * What is spilled counts against the principal's share of the store (refused past it).
     */
    async seal(text: string, principal: string | undefined): Promise<{ ref?: SpillRef; body: string }> {
      if (store === undefined || !spills(text)) return { body: text };
      const id = encodeBase64url(randomBytes(16));
      const key = `state:${id}`;
      await bytes.charge(principal, key.length + text.length);
      await store.set(key, text, ttlMs);
      return { ref: { sp: id, h: digestOf(text) }, body: "" };
    },
    /** The reference in sealed data, if the journal was spilled. */
    refOf(data: unknown): SpillRef | undefined {
      return isSpillRef(data) ? data : undefined;
    },
    /** The text a reference points to; an expired or altered entry is refused like a bad state. */
    async open(ref: SpillRef): Promise<string> {
      if (store === undefined) throw new ProtocolError(ErrorCode.InvalidParams, "Invalid requestState: it refers to a stored journal, and this server has no store", { reason: "malformed" });
      const text = await store.get(`state:${ref.sp}`);
      if (text === undefined) throw new ProtocolError(ErrorCode.InvalidParams, "Invalid requestState: its stored journal has expired; start the call again", { reason: "expired" });
      if (digestOf(text) !== ref.h) throw new ProtocolError(ErrorCode.InvalidParams, "Invalid requestState: its stored journal does not match", { reason: "malformed" });
      return text;
    },
  };
}

export type Spill = ReturnType<typeof createSpill>;
