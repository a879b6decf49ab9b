/** Why a requestState token was refused. Stable strings: they appear as `data.reason` on the wire. */
export type StateErrorReason = "malformed" | "too_large" | "unknown_key" | "bad_signature" | "expired" | "wrong_binding" | "unsupported_version";

/** A refused requestState. The message is safe to show a client; it never echoes the token. */
export class StateError extends Error {
  override readonly name = "StateError";
  constructor(
    readonly reason: StateErrorReason,
    message: string,
  ) {
    super(message);
  }
}

/** Raised when the codec is configured wrongly (short key, duplicate id, bad limits). */
export class StateConfigError extends Error {
  override readonly name = "StateConfigError";
}
