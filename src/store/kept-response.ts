// store/kept-response.ts owns the text format of a round's kept response — what single use
// (runtime/redeem.ts) writes under `redeem:<nonce>` once a round answered, and what the memory
// store reads to shrink it when full — so both sides read and write one definition.
//
// The record is `{"d":"<digest>","s":"done","r":<response JSON>}`: members in that order, the
// digest base64url (nothing to escape), so a reader can take its head as text or bytes without
// parsing the response. Shrunk, it is `{"d":"<digest>","s":"done","dropped":true}`.

const DONE_HEAD = '{"d":"';
const DONE_TAIL = '","s":"done","r":';
const DIGEST = /^[A-Za-z0-9_-]{1,128}$/;

/** The key prefix of single-use records. */
export const REDEEM_PREFIX = "redeem:";

/** A kept response's record, as JSON text: `digest` base64url, `responseJson` the response as JSON. */
export function keptResponseText(digest: string, responseJson: string): string {
  return `${DONE_HEAD}${digest}${DONE_TAIL}${responseJson}}`;
}

/** Whether `digest` can stand in a kept record as it is (base64url, 1–128 characters). */
export const isKeptDigest = (digest: string): boolean => DIGEST.test(digest);

/**
 * The default `shrink`: the runtime's record of an answered round (runtime/redeem.ts, status
 * `done` with the response in `r`) without its response. Anything else stays as it is.
 */
export function dropKeptResponse(key: string, value: string): string | undefined {
  // Read as text, not parsed: a full store shrinks every answered round once, and parsing each
  // response (to keep 43 characters of it) measured as a large part of a full store's writes.
  // The runtime writes {d, s, r} in that order, d a base64url digest (nothing escaped in it).
  if (!key.startsWith(REDEEM_PREFIX) || !value.startsWith(DONE_HEAD)) return undefined;
  const end = value.indexOf('"', DONE_HEAD.length);
  if (end === -1 || !value.startsWith(DONE_TAIL, end)) return undefined;
  const d = value.slice(DONE_HEAD.length, end);
  if (!DIGEST.test(d)) return undefined;
  return `{"d":"${d}","s":"done","dropped":true}`;
}

const ascii = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));
const REDEEM_BYTES = ascii(REDEEM_PREFIX);
const HEAD_BYTES = ascii(DONE_HEAD);
const TAIL_BYTES = ascii(DONE_TAIL);
/** What `dropKeptResponse` writes after the kept head (`{"d":"<digest>","s":"done",`). */
export const DROPPED_BYTES = ascii('"dropped":true}');
/** The part of DONE_TAIL the shrunk value keeps (`","s":"done",`: all but `"r":`). */
const TAIL_KEPT = DONE_TAIL.length - '"r":'.length;

const startsWithBytes = (bytes: Uint8Array, prefix: Uint8Array, at = 0): boolean => {
  if (at + prefix.length > bytes.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[at + i] !== prefix[i]) return false;
  return true;
};
/** A base64url character (DIGEST's class), as a UTF-8 byte. */
const isDigestByte = (b: number) => (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || (b >= 0x30 && b <= 0x39) || b === 0x5f || b === 0x2d;

/**
 * `dropKeptResponse` read from an entry's UTF-8 bytes: how many bytes of the value its shrunk
 * value keeps — the head through `"s":"done",`, after which it is `"dropped":true}` — or -1
 * when `dropKeptResponse` would give `undefined`. The same verdict (a property test holds the
 * two together): the key starts "redeem:", the value with DONE_HEAD, then 1–128 digest
 * characters and DONE_TAIL (ASCII throughout, so bytes and characters line up, and a byte of a
 * multi-byte character is never one of them). A full store shrinks every answered round once:
 * decoding each one's key and head to text, and encoding the result, was that shrink's cost.
 */
export function keptResponseHead(key: Uint8Array, value: Uint8Array): number {
  if (!startsWithBytes(key, REDEEM_BYTES) || !startsWithBytes(value, HEAD_BYTES)) return -1;
  let end = HEAD_BYTES.length;
  while (end < value.length && end - HEAD_BYTES.length <= 128 && isDigestByte(value[end]!)) end++;
  const digestLength = end - HEAD_BYTES.length;
  if (digestLength < 1 || digestLength > 128 || !startsWithBytes(value, TAIL_BYTES, end)) return -1;
  return end + TAIL_KEPT;
}

/** Whether `bytes` are all ASCII (then their count is their UTF-16 length). */
export const isAscii = (bytes: Uint8Array): boolean => {
  for (let i = 0; i < bytes.length; i++) if (bytes[i]! >= 0x80) return false;
  return true;
};
/**
 * How much of a value `dropKeptResponse` can read: its head, a digest of at most 128 characters
 * and its tail — all ASCII, so in a value's first this many bytes whenever it gives a record.
 * Given only those bytes it answers as given the whole value (a character cut at the end decodes
 * as U+FFFD, and a non-ASCII character where it reads fails it either way).
 */
export const DROP_READS = DONE_HEAD.length + 128 + DONE_TAIL.length;
