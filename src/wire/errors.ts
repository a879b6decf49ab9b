/** JSON-RPC error codes used on the 2026-07-28 wire. `-32002` and `-32042` are retired. */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** An HTTP header disagrees with the body (`Mcp-Method`, `Mcp-Name`, version). */
  HeaderMismatch: -32020,
  /** The work needs a client capability this request did not declare. */
  MissingClientCapability: -32021,
  /** The request's protocol version is not supported. */
  UnsupportedProtocolVersion: -32022,
} as const;
/** One of the `ErrorCode` values. */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** A JSON-RPC error object as it goes on the wire. */
export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: Record<string, unknown>;
}

/**
 * A protocol-level failure that must reach the client as a JSON-RPC error (never as a tool
 * result). `data.reason` is a stable machine-readable string.
 */
export class ProtocolError extends Error {
  override readonly name = "ProtocolError";
  constructor(
    readonly code: number,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
  }

  /** The `error` member of a JSON-RPC error response. */
  toJSON(): JsonRpcErrorObject {
    return this.data === undefined ? { code: this.code, message: this.message } : { code: this.code, message: this.message, data: this.data };
  }
}
