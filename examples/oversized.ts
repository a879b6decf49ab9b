import type { IncomingMessage, ServerResponse } from "node:http";

/** Past this a too-large body is not read to its end: the 413 goes out at once and the connection closes. */
export const DRAIN_MAX_BYTES = 16 * 1024 * 1024;

/**
 * Answer a request whose declared body (`content-length`) is over `maxBytes` with HTTP 413 and a
 * JSON-RPC error (`id: null`: the request was not read, so its id is unknown) — after reading the
 * body to its end and discarding it. A server that answers while the client is still sending and
 * then closes (what the SDK's Node adapter does past its own limit) races the client: Node's
 * `fetch` can fail with EPIPE before it reads the 413, and the keep-alive connection is lost.
 * Read to the end, the 413 arrives as what it is and the connection carries the next request.
 * Bodies declared over DRAIN_MAX_BYTES are not worth reading: 413 at once, connection closed.
 * Returns false (and does nothing) for a request within the limit or without a declared length
 * (chunked: the adapter's own bound applies).
 */
export function refuseOversized(req: IncomingMessage, res: ServerResponse, maxBytes: number): boolean {
  const declared = Number(req.headers["content-length"]);
  if (!Number.isFinite(declared) || declared <= maxBytes) return false;
  const body = JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: `Payload Too Large: Request body must not exceed ${maxBytes} bytes` }, id: null });
  const answer = (close: boolean) => res.writeHead(413, { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...(close ? { connection: "close" } : {}) }).end(body);
  if (declared > DRAIN_MAX_BYTES) {
    answer(true);
    return true;
  }
  req.on("error", () => res.destroy());
  req.on("end", () => answer(false));
  req.resume();
  return true;
}
