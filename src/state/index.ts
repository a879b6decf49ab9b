export { createStateCodec, type InspectedState, type MintedState, type StateCodec, type StateCodecOptions, type StateMode } from "./token/codec.js";
export { StateError, StateConfigError, type StateErrorReason } from "./errors.js";
export { parseKeyRing, type StateKey, MIN_SECRET_BYTES } from "./token/keyring.js";
export type { StateBinding, OpenedState } from "./token/claims.js";
export { canonicalJson, digestOf, deepFreeze, shortDigest } from "./canonical.js";
export { encodeValue, decodeValue, UnsupportedValueError } from "./value-text.js";
export { randomBytes, randomUuid } from "./random.js";
export { encodeBase64url, decodeBase64url } from "./base64url.js";
