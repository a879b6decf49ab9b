// journal/ owns the journal's format: what a call has done, as records (records.ts), the
// fingerprints that identify each effect (fingerprint.ts), how values are recorded (outcome.ts),
// and the words for them (describe.ts). This file is its entry for the layers above. It knows
// nothing of requests, stores or generators.

export { type JournalRecord, type StateHeader, type StatePayload, parseHeader, headerJson, payloadFrom, recordLines, parseLines } from "./records.js";
export { requestOf, inputRequestsJson, type AskPart, describeAskChange, fingerprintOf, canFingerprint, subKey, defaultKey, branchKey, raceFingerprints, waitsOn } from "./fingerprint.js";
export { encodeOutcome, decodeOutcome } from "./outcome.js";
export { describeFingerprint } from "./describe.js";
export { withoutFailedAttempts } from "./failed-attempts.js";
