import { fingerprintOf, decodeOutcome, defaultKey } from "/work/main/dist/journal/journal.js";
import { elicit } from "/work/main/dist/index.js";
import { z } from "zod";
const Num = z.object({ n: z.number().int() });
const effects = [];
function effectOf(i) { const g = elicit(`Number ${i + 1} of 30?`, Num); return g[Symbol.iterator] ? g[Symbol.iterator]().next().value : g.next().value; }
const recs = []; for (let i = 0; i < 30; i++) { const e = effectOf(i); recs.push(fingerprintOf(e, defaultKey("elicit", i))); }
const recorded = recs.map((r) => (" " + r).slice(1));
let sink = 0;
for (let rep = 0; rep < 6; rep++) {
  let t = process.hrtime.bigint();
  for (let k = 0; k < 20000; k++) for (let i = 0; i < 30; i++) { const e = effectOf(i); sink += e.kind.length; }
  const base = Number(process.hrtime.bigint() - t) / 6e5;
  t = process.hrtime.bigint();
  for (let k = 0; k < 20000; k++) for (let i = 0; i < 30; i++) { const e = effectOf(i); sink += fingerprintOf(e, defaultKey("elicit", i), recorded[i]).length; }
  const fp = Number(process.hrtime.bigint() - t) / 6e5;
  t = process.hrtime.bigint();
  for (let k = 0; k < 20000; k++) for (let i = 0; i < 30; i++) { const e = effectOf(i); sink += fingerprintOf(e, defaultKey("elicit", i), recorded[i]).length; sink += decodeOutcome(e, `{"n":${i}}`) ? 1 : 0; }
  const dec = Number(process.hrtime.bigint() - t) / 6e5;
  console.log(`effect ${base.toFixed(0)} ns; +fp ${(fp - base).toFixed(0)} ns; +decode ${(dec - fp).toFixed(0)} ns`);
}
