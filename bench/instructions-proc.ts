// One variant under the instruction counter (see instructions.ts): builds the operation from
// bench/variants.ts, runs `warm` operations, then `measured` more, and exits. The counter counts
// the whole process; the caller subtracts a run with `measured` = 0.
import * as variants from "./variants.js";

const [factory, args, warm, measured] = [process.argv[2] as keyof typeof variants, JSON.parse(process.argv[3] ?? "[]") as unknown[], Number(process.argv[4]), Number(process.argv[5])];
const op = (await (variants[factory] as (...a: unknown[]) => unknown)(...args)) as () => unknown;
for (let i = 0; i < warm + measured; i++) await op();
// A variant may hold open handles (a Redis connection): exit now.
process.exit(0);
