import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createMemoryStore } from "mcp-yield";
import { createPrincipalBytes, createStoreClock, creditedBytes, isPrincipalByteLimit, type PrincipalBytes } from "../../src/store/index.js";

// A principal's share charged a credit at a time: few store round trips, and at the limit the
// same answers as charging every byte — a charge is refused only when it would not fit, and
// what the store counts never passes the limit.

const WINDOW_MS = 60_000;

function setup(limit: number, creditBytes: number) {
  let now = 1_800_000_000_000;
  const store = createMemoryStore({ clock: () => now });
  const time = createStoreClock({ store, local: () => now });
  const counted = createPrincipalBytes({ store, time, limit, windowMs: WINDOW_MS });
  let purchases = 0;
  const counting: PrincipalBytes = { charge: (p, b) => (purchases++, counted.charge(p, b)), refund: counted.refund };
  const bytes = creditedBytes(counting, { time, windowMs: WINDOW_MS, creditBytes });
  return { bytes, purchases: () => purchases, advance: (ms: number) => (now += ms) };
}

const charge = async (bytes: PrincipalBytes, principal: string, n: number) =>
  bytes.charge(principal, n).then(
    () => true,
    (error: unknown) => {
      if (isPrincipalByteLimit(error)) return false;
      throw error;
    },
  );

describe("creditedBytes", () => {
  it("buys a credit for many small charges: one store round trip per credit", async () => {
    const { bytes, purchases } = setup(1_000_000, 64 * 1024);
    for (let i = 0; i < 100; i++) await bytes.charge("p", 1_000);
    // 100,000 bytes in credits of 65,536: two purchases.
    expect(purchases()).toBe(2);
  });

  it("shares one purchase among charges made together", async () => {
    const { bytes, purchases } = setup(1_000_000, 64 * 1024);
    await Promise.all(Array.from({ length: 50 }, () => bytes.charge("p", 500)));
    expect(purchases()).toBe(1);
  });

  it("does not carry credit into the next counting window", async () => {
    const { bytes, purchases, advance } = setup(1_000_000, 64 * 1024);
    await bytes.charge("p", 100);
    advance(WINDOW_MS);
    await bytes.charge("p", 100);
    expect(purchases()).toBe(2);
  });

  it("answers like charging every byte, at the limit too (one instance, any charges)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 5_000 }), { minLength: 1, maxLength: 60 }), fc.integer({ min: 1, max: 8_192 }), async (charges, creditBytes) => {
        const limit = 20_000;
        const { bytes } = setup(limit, creditBytes);
        let exact = 0;
        for (const n of charges) {
          const fits = exact + n <= limit;
          expect(await charge(bytes, "p", n)).toBe(fits);
          if (fits) exact += n;
        }
      }),
      { numRuns: 200 },
    );
  });

  it("takes a refund back into the window's credit, never into the next window's", async () => {
    const { bytes, advance } = setup(10_000, 10_000);
    expect(await charge(bytes, "p", 6_000)).toBe(true);
    bytes.refund("p", 6_000);
    // Given back: the whole share fits again.
    expect(await charge(bytes, "p", 10_000)).toBe(true);
    advance(WINDOW_MS);
    bytes.refund("p", 10_000);
    // The previous window's 10,000 still count against this one: a refund made later is not credit.
    expect(await charge(bytes, "p", 1)).toBe(false);
  });

  it("keeps principals apart", async () => {
    const { bytes } = setup(10_000, 4_096);
    expect(await charge(bytes, "a", 9_000)).toBe(true);
    expect(await charge(bytes, "a", 2_000)).toBe(false);
    expect(await charge(bytes, "b", 9_000)).toBe(true);
  });
});
