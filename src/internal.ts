// The project's internal seam: names its own tests and benchmarks use that are not part of the
// public surface (wire schemas, encoders, digests). Not in package.json `exports`: users cannot
// import it, and nothing here is promised to stay.

export * from "./wire/index.js";
export { plainCallToolParams, plainGetPromptParams, plainReadResourceParams, plainElicitResult } from "./wire/plain-params.js";
export { canonicalJson, digestOf, shortDigest, deepFreeze } from "./state/canonical.js";
export { encodeValue, encodeValueWalked, decodeValue } from "./state/value-text.js";
export { randomUuid } from "./state/random.js";
export { encodeBase64url, decodeBase64url } from "./state/base64url.js";
export { createStoreClock } from "./store/store-clock.js";
export { dropKeptResponse } from "./store/kept-response.js";
export { parseLines } from "./journal/journal.js";
export { argumentsDigest } from "./runtime/admission.js";
export { randomBytes } from "./state/random.js";
export { compileUriTemplate } from "./authoring/uri-template.js";
export { isEffect } from "./authoring/effects.js";
