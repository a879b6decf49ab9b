// Bytes one operation of a variant allocates on the JavaScript heap (see instructions.ts): the
// heap's growth over windows of operations, in a young generation large enough that no
// collection falls inside most windows (a window with one shows no growth and is left out).
import v8 from "node:v8";
import * as variants from "./variants.js";

const [factory, args] = [process.argv[2] as keyof typeof variants, JSON.parse(process.argv[3] ?? "[]") as unknown[]];
const op = (await (variants[factory] as (...a: unknown[]) => unknown)(...args)) as () => unknown;
for (let i = 0; i < 1000; i++) await op();
const perOp: number[] = [];
for (let w = 0; w < 100; w++) {
  const before = v8.getHeapStatistics().used_heap_size;
  for (let i = 0; i < 10; i++) await op();
  const after = v8.getHeapStatistics().used_heap_size;
  if (after > before) perOp.push((after - before) / 10);
}
perOp.sort((a, b) => a - b);
process.stdout.write(`${perOp.length > 50 ? Math.round(perOp[perOp.length >> 1]!) : "NaN"}\n`);
process.exit(0);
