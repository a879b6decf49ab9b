// `node --cpu-prof bench/.build/bench/profile.js <factory> <args-json> [seconds]`: one variant in a loop, for a CPU profile.
import * as variants from "./variants.js";

const [factory, args, seconds] = [process.argv[2] as keyof typeof variants, JSON.parse(process.argv[3] ?? "[]") as unknown[], Number(process.argv[4] ?? 5)];
const op = await (variants[factory] as (...a: unknown[]) => () => unknown)(...args);
const until = performance.now() + seconds * 1000;
let n = 0;
while (performance.now() < until) {
  await op();
  n++;
}
console.error(`${factory} ${JSON.stringify(args)}: ${n} operations, ${((seconds * 1e6) / n).toFixed(1)} µs each`);
// A variant may hold open handles (a Redis connection): exit, so the profile is written.
process.exit(0);
