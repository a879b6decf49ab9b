import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { encodeValue } from "../../src/internal.js";
import { withoutFailedAttempts } from "../../src/journal/journal.js";
import type { JournalRecord } from "../../src/journal/journal.js";

// What a held task's retry cuts from its journal: the failed attempts of the step it ended on
// (and the delays between them) — never anything before them.

const failed = (step: string): JournalRecord => [`R${step}`, encodeValue({ failed: { name: "Error", message: "down", retry: true } })];
const ok = (step: string): JournalRecord => [`R${step}`, encodeValue({ ok: 1 })];
const delay: JournalRecord = ["Z", encodeValue(1_900_000_000_000)];

/** Records that end with no failed attempt of "charge": any kind, the step's own successes included. */
const record = fc.oneof(
  fc.constant(ok("charge")),
  fc.constant(failed("other")),
  fc.constant(delay),
  fc.constant<JournalRecord>(["Squote", encodeValue(42)]),
  fc.constant<JournalRecord>(["Wgo", encodeValue(true)]),
);
const before = fc.array(record, { maxLength: 12 }).filter((j) => j.at(-1)?.[0] !== "Z");

describe("withoutFailedAttempts", () => {
  it("cuts exactly the trailing failed attempts and the delays between them (with or without a last delay)", () => {
    fc.assert(
      fc.property(before, fc.integer({ min: 1, max: 6 }), fc.boolean(), (kept, attempts, lastDelay) => {
        const tail: JournalRecord[] = [];
        for (let i = 0; i < attempts; i++) tail.push(...(i > 0 ? [delay] : []), failed("charge"));
        if (lastDelay) tail.push(delay);
        expect(withoutFailedAttempts([...kept, ...tail], "charge")).toEqual(kept);
      }),
    );
  });

  it("leaves a journal that does not end with the step's failed attempts as it is", () => {
    fc.assert(
      fc.property(before, (journal) => {
        expect(withoutFailedAttempts(journal, "charge")).toEqual(journal);
      }),
    );
    // A completed earlier call of the same step stays; another step's failures are not this one's.
    expect(withoutFailedAttempts([ok("charge"), failed("charge"), delay, failed("charge")], "charge")).toEqual([ok("charge")]);
    expect(withoutFailedAttempts([failed("charge"), delay, failed("other")], "charge")).toHaveLength(3);
    // A step name with a tab is fingerprinted by its hash, and found so.
    expect(withoutFailedAttempts([["Squote", "1"], failed("charge")], "char\tge")).toHaveLength(2);
  });
});
