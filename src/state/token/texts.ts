import { decodeBase64url, decodeUtf8, encodeBase64url, encodeTextBase64url } from "../base64url.js";
import { type CryptoBackend, constantTimeEqualText } from "./crypto.js";
import type { DerivedKey } from "./keyring.js";

// Short texts a codec makes unforgeable for one purpose, beside its state tokens: signed
// (`<keyId>.<text>.<HMAC>`: readable, e.g. by an operator) or sealed (`<keyId>.<iv ‖ AES-GCM>`:
// opaque — a task's signal URL, which must not name its task to whoever holds it). Both are
// deterministic: the same text gives the same token under the same key (a task's replay makes
// the same URL again). Every key of the ring opens them, so a rotation that keeps the old key
// in the ring keeps its texts working.

const IV_BYTES = 12;
const encoder = new TextEncoder();

/** What the texts need from the codec: its backend, the key that seals now, the ring by key id. */
export interface TextKeys {
  backend: CryptoBackend;
  signer: DerivedKey;
  byId: ReadonlyMap<string, DerivedKey>;
  maxTokenBytes: number;
}

/** The UTF-8 text of `bytes`, or `undefined` when they are not UTF-8 (the decoder is fatal where there is no Buffer). */
function utf8Of(bytes: Uint8Array): string | undefined {
  try {
    return decodeUtf8(bytes);
  } catch {
    return undefined;
  }
}

export function createTexts({ backend, signer, byId, maxTokenBytes }: TextKeys) {
  // Signed texts: HMAC over the purpose and the text with the key's MAC subkey, the purpose
  // prefixed so no signed text can stand for a state token's signed part or another purpose's.
  const textMac = (key: DerivedKey, purpose: string, text: string) => backend.hmacSha256Base64url(key.mac, `mcp-yield/text/${purpose}\0${text}`);
  // Sealed texts: AES-GCM under the key's AEAD subkey, the purpose as associated data. The IV is
  // a keyed hash of purpose and text (a synthetic IV): one IV only ever seals one plaintext, so
  // the same text gives the same token, and different texts never share an IV.
  const aadOf = (purpose: string) => encoder.encode(`mcp-yield/sealed-text/${purpose}`);
  const ivOf = (key: DerivedKey, purpose: string, text: string) => backend.hmacSha256(key.mac, `mcp-yield/sealed-text-iv/${purpose}\0${text}`).subarray(0, IV_BYTES);

  /** Split a token into its key and body, or `undefined` when it cannot be one of `parts` segments. */
  function keyed(token: unknown, parts: number): { key: DerivedKey; segments: string[] } | undefined {
    if (typeof token !== "string" || token.length > maxTokenBytes) return undefined;
    const segments = token.split(".");
    const key = segments.length === parts ? byId.get(segments[0]!) : undefined;
    return key === undefined ? undefined : { key, segments };
  }

  return {
    signText(purpose: string, text: string): string {
      return `${signer.id}.${encodeTextBase64url(text)}.${textMac(signer, purpose, text)}`;
    },
    verifyText(purpose: string, token: string): string | undefined {
      const found = keyed(token, 3);
      if (found === undefined) return undefined;
      const [, body, mac] = found.segments as [string, string, string];
      const bytes = decodeBase64url(body);
      const text = bytes === undefined ? undefined : utf8Of(bytes);
      // The MAC is over the text: a body that is not its exact encoding (bad UTF-8) cannot match.
      return text !== undefined && encodeTextBase64url(text) === body && constantTimeEqualText(mac, textMac(found.key, purpose, text)) ? text : undefined;
    },
    sealText(purpose: string, text: string): string {
      return `${signer.id}.${encodeBase64url(backend.aesGcmSeal(signer.aead, ivOf(signer, purpose, text), text, aadOf(purpose)))}`;
    },
    openText(purpose: string, token: string): string | undefined {
      const found = keyed(token, 2);
      const sealed = found === undefined ? undefined : decodeBase64url(found.segments[1]!);
      if (found === undefined || sealed === undefined || sealed.length <= IV_BYTES) return undefined;
      const plaintext = backend.aesGcmOpen(found.key.aead, sealed.subarray(0, IV_BYTES), sealed.subarray(IV_BYTES), aadOf(purpose));
      return plaintext === undefined ? undefined : utf8Of(plaintext);
    },
  };
}
