import { describe, expect, it } from "vitest";
import { LiveCalls } from "../../src/replay/live-calls.js";

// LiveCalls with many calls interleaved, counted in parks as the runtime counts: every call's
// next round comes after every other call's (test/system/live-volume.test.ts drives the runtime).

const owner = {};
const entry = () => ({
  owner,
  suspended: {} as never,
  context: {} as never,
  payload: {} as never,
  minted: { nonce: "n", expiresAt: 1e9, method: "tools/call", target: "t", argumentsDigest: "d", principal: undefined },
});

/** `passes` rounds of `calls` calls in turn, served as the runtime serves a round; the share of each pass's rounds resumed. */
function inTurn(held: LiveCalls, calls: number, passes: number): number[] {
  const token = (call: number, pass: number) => `${pass}:${call}`.padStart(40, "t");
  // Ids whose last character is 0 or 8 are the sampled ones (as a random UUID's are one in eight).
  const id = (call: number) => `call-${call}`;
  const shares: number[] = [];
  for (let pass = 0; pass < passes; pass++) {
    let resumed = 0;
    for (let call = 0; call < calls; call++) {
      if (pass > 0 && (held.take(token(call, pass - 1), owner) ?? held.takeEarlier(id(call), owner, () => true)) !== undefined) resumed++;
      held.put(token(call, pass), entry(), 1e9, id(call), pass > 0);
    }
    shares.push(resumed / calls);
  }
  return shares;
}

describe("live calls at volume", () => {
  it.each([1_100, 5_000, 20_000])("%i calls in turn: the idle bound rises to their wait, and then every round resumes", (calls) => {
    // Generous bounds: what is tried is the idle bound alone.
    const shares = inTurn(new LiveCalls(100_000, 2 ** 40, () => 1000), calls, 5);
    // The first generators went as idle (the first bound is 8 parks); their calls' coming back
    // raised it (at 20,000, a few of the first ghosts lost their slots to later ones first).
    expect(shares[1]).toBeLessThan(0.5);
    expect(shares[2]).toBeGreaterThanOrEqual(0.99);
    expect(shares.slice(3)).toEqual([1, 1]);
  });

  it("more calls in turn than the count holds: those held keep their turn, round after round", () => {
    const shares = inTurn(new LiveCalls(1000, 2 ** 40, () => 1000), 3000, 6);
    // A third can be held; evicting the oldest at the bound (the one whose round came next) resumed none.
    for (const share of shares.slice(3)) expect(share).toBeCloseTo(1 / 3, 1);
  });
});
