/**
 * How far apart two instances' clocks may be without breaking single use (docs/exactly-once.md
 * "Clocks"). A token's expiry is judged on the clock of the instance that reads it, while the
 * records that keep it from running twice (its kept response, its spilled journal, an
 * idempotency key's record) are written with a lifetime measured on the writer's clock. Each
 * such record lives this much longer than the state it guards, so an instance whose clock is
 * slow by up to this much still finds the record for as long as it still takes the token as
 * valid. Claims and task leases need no margin: they are judged on the store's clock.
 */
export const TOLERATED_CLOCK_SKEW_MS = 60_000;

/** The lifetime to give a record that must outlive a state expiring at `expiresAt` on every instance's clock. */
export const guardTtl = (expiresAt: number, now: number): number => Math.max(1, expiresAt - now + TOLERATED_CLOCK_SKEW_MS);
