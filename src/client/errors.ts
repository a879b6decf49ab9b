/** Why a client-side round-trip loop gave up. */
export type ClientErrorReason =
  | "round_limit"
  | "unknown_result_type"
  | "invalid_result"
  | "no_handler"
  | "too_many_asks"
  | "undeclared_kind"
  | "aborted"
  | "deadline"
  | "task_failed"
  | "task_cancelled"
  | "rpc_error"
  | "transport";

/** A failure of the client loop; `rpc` holds the server's JSON-RPC error when there was one. */
export class ClientError extends Error {
  override readonly name = "ClientError";
  constructor(
    readonly reason: ClientErrorReason,
    message: string,
    readonly rpc?: { code: number; message: string; data?: unknown },
    /** The underlying failure, when there was one (e.g. the network error behind "fetch failed"). */
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
