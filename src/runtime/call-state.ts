import type { MintedState, OpenedState, StateBinding, StateCodec } from "../state/index.js";
import { StateError } from "../state/index.js";
import { jsonMinterOf, mintsBase64urlTokens } from "../state/token/codec.js";
import { headerJson, parseHeader, parseLines, payloadFrom, type StateHeader, type StatePayload } from "../journal/journal.js";
import type { SpillRef } from "../journal/spill-ref.js";
import { CodeUnknownError, DivergenceError, type ErrorInfo } from "../replay/errors.js";
import { type CodeVersions, isRetired } from "../authoring/definitions.js";
import type { LiveCalls } from "../replay/live-calls.js";
import { ErrorCode, ProtocolError } from "../wire/index.js";
import { invalidParams, storeFailure, storeSafe } from "./admission.js";
import { isPrincipalByteLimit, StoreError } from "../store/index.js";
import type { Spill } from "./spill.js";

/**
 * Call state: the `requestState` a request presents, opened, and the one a round hands back,
 * minted. Owns the token's journal placement (in the token's body, or spilled to the store).
 *
 * Invariants:
 * 1. Nothing in a token is read as a journal before its MAC or AEAD tag verified and its binding
 *    (method, target, arguments, principal) matched this request.
 * 2. A held token (this instance minted it and keeps its suspended call) is recognised by exact
 *    match only, and only while every part of its binding and its expiry still hold.
 * 3. A journal minted by another definition version is a divergence, never replayed.
 */

/** A presented state, verified: by exact match with a token this instance holds, or in full (`opened`). */
export interface Presented {
  token: string;
  nonce: string;
  expiresAt: number;
  opened?: OpenedState<unknown>;
}

const PAYLOAD_LIMIT_REASON = "state_too_large";

/** What opening and minting states needs from the runtime. */
export interface CallStateParts {
  codec: StateCodec;
  spill: Spill;
  live: LiveCalls;
  report: (error: unknown, info: ErrorInfo) => void;
}

/** Open and mint the states of calls, for one runtime. */
export function createCallState({ codec, spill, live, report }: CallStateParts) {
  /** Verify the token (integrity, expiry, binding); its data is not trusted as a journal yet. */
  function verifyState(token: string, binding: StateBinding): OpenedState<unknown> {
    try {
      return codec.open(token, binding);
    } catch (error) {
      if (error instanceof StateError) throw invalidParams(`Invalid requestState: ${error.message}`, error.reason);
      throw error;
    }
  }

  /**
   * The journal a verified state carries (in its body, or spilled to the store): shape and
   * version checked.
   */
  function payloadOf(opened: OpenedState<unknown>, code: Pick<CodeVersions, "version" | "retiredVersions">): StatePayload | Promise<StatePayload> {
    const ref = spill.refOf(opened.data);
    // Synchronous unless the journal was spilled to the store.
    if (ref === undefined) return checkedPayload(linesPayload(opened.data, opened.body ?? ""), code);
    return storeSafe(() => spill.open(ref)).then((text) => checkedPayload(linesPayload(opened.data, text), code));
  }

  /** A payload: the header from the sealed data, the records from the lines. */
  function linesPayload(data: unknown, text: string): StatePayload | undefined {
    const header = parseHeader(data);
    const j = header && parseLines(text);
    return header && j ? payloadFrom(header, j, text) : undefined;
  }

  function checkedPayload(payload: StatePayload | undefined, code: Pick<CodeVersions, "version" | "retiredVersions">): StatePayload {
    if (payload === undefined) throw invalidParams("Invalid requestState: payload is not a journal", "malformed");
    if (payload.v !== code.version) {
      // Another version: ended if this code retired it, handed back (newer code, mid-deploy) if not.
      if (!isRetired(code, payload.v)) throw new CodeUnknownError(`version ${JSON.stringify(payload.v)}`);
      throw new DivergenceError(-1, undefined, undefined, `the definition's version changed from ${JSON.stringify(payload.v ?? null)} to ${JSON.stringify(code.version ?? null)}`);
    }
    return payload;
  }

  /**
   * The state a request presents, verified. A token this instance minted and still holds a
   * suspended generator for is recognised by exact match — it is bound to this definition,
   * these arguments and this principal and has not expired — and needs no decoding; any other
   * token is verified in full (integrity, expiry, binding). Every part of the binding is
   * compared: one definition may serve many targets (a resource template, many uris).
   */
  function presented(owner: object, binding: StateBinding, token: string): Presented {
    const held = live.peek(token);
    const minted = held?.minted;
    if (
      held !== undefined &&
      minted !== undefined &&
      held.owner === owner &&
      minted.method === binding.method &&
      minted.target === binding.target &&
      minted.expiresAt > codec.now() &&
      minted.argumentsDigest === binding.argumentsDigest &&
      minted.principal === binding.principal
    ) {
      return { token, nonce: minted.nonce, expiresAt: minted.expiresAt };
    }
    const opened = verifyState(token, binding);
    return { token, nonce: opened.nonce, expiresAt: opened.expiresAt, opened };
  }

  /** Mint the state of a call that waits for input: the header in the token, the journal as its body (or spilled). */
  function mintState(binding: StateBinding, header: StateHeader, text: string, info: ErrorInfo): MintedState | Promise<MintedState> {
    // Synchronous unless the journal goes to the store.
    if (!spill.spills(text)) return mintSealed(binding, header, undefined, text, info);
    return spill.seal(text, binding.principal).then(
      ({ ref, body }) => mintSealed(binding, header, ref, body, info),
      (error: unknown) => {
        const overShare = isPrincipalByteLimit(error);
        if (!(error instanceof StoreError) && !overShare) throw error;
        // The store cannot (or will not, for this principal) keep the journal now: the token
        // carries it, if it fits. The round's steps have run; failing it here would cost the
        // client a retry for nothing.
        if (!overShare) report(error, info);
        try {
          return codec.mint({ binding, data: header, body: text });
        } catch (inline) {
          if (inline instanceof StateError) throw overShare ? error : storeFailure(error as StoreError);
          throw inline;
        }
      },
    );
  }

  function mintSealed(binding: StateBinding, header: StateHeader, ref: SpillRef | undefined, body: string, info: ErrorInfo): MintedState {
    try {
      // Our own codec takes the header as JSON text written by hand (`headerJson`): the same token.
      const json = ref === undefined && mintJson !== undefined ? headerJson(header) : undefined;
      if (json !== undefined) return mintJson!(binding, json, body);
      return codec.mint({ binding, data: ref === undefined ? header : { ...header, ...ref }, body });
    } catch (error) {
      report(error, info);
      if (error instanceof StateError) {
        throw new ProtocolError(ErrorCode.InternalError, "The call's state grew past the server's size limit", { reason: PAYLOAD_LIMIT_REASON });
      }
      throw error;
    }
  }

  const mintJson = jsonMinterOf(codec);

  /** Whether the tokens `mintState` makes are base64url and dots (the codec is ours): a round's record splices them in unscanned. */
  const verbatimTokens = mintsBase64urlTokens(codec);

  return { verifyState, payloadOf, presented, mintState, verbatimTokens };
}

/** What `createCallState` makes. */
export type CallState = ReturnType<typeof createCallState>;
