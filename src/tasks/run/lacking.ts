// tasks/run/lacking.ts owns what an instance remembers of tasks recorded by code it does not have
// (a version it does not know, a patch it does not make: newer code, mid-deploy): for a minute
// its sweeper leaves them to the instances that have that code, instead of taking each over
// only to hand it back again at once.

/** How long a task whose code this instance lacks is left to others (local clock, ms). */
export const LACKING_MS = 60_000;
/** At most this many remembered (past it, the oldest are forgotten: they are tried again, no harm). */
const MAX_REMEMBERED = 10_000;

export function createLacking(clock: () => number) {
  const until = new Map<string, number>();
  return {
    /** This instance lacks the code `id` was recorded by. */
    mark(id: string): void {
      until.delete(id);
      if (until.size >= MAX_REMEMBERED) until.delete(until.keys().next().value!);
      until.set(id, clock() + LACKING_MS);
    },
    /** Whether `id` is left to other instances now. */
    has(id: string): boolean {
      const at = until.get(id);
      if (at === undefined) return false;
      if (at > clock()) return true;
      until.delete(id);
      return false;
    },
  };
}
