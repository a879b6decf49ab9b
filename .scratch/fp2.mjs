import { elicit } from "/work/main/dist/index.js";
import { z } from "zod";
const Num = z.object({ n: z.number().int() });
function effectOf(i) { const g = elicit(`Number ${i + 1} of 30?`, Num); return g[Symbol.iterator]().next().value; }
const msgs = Array.from({ length: 30 }, (_, i) => (" " + `Number ${i + 1} of 30?`).slice(1));
const m = new Map(); for (let i = 0; i < 30; i++) m.set("elicit-" + i, { message: msgs[i] });
const keys = [...m.keys()];
let sink = 0;
const isPlain = (p) => { let n = 0; for (const k in p) if (Object.prototype.hasOwnProperty.call(p, k)) n++; return n === 3; };
for (let rep = 0; rep < 6; rep++) {
  const T = (f) => { const t = process.hrtime.bigint(); for (let k = 0; k < 20000; k++) for (let i = 0; i < 30; i++) f(i); return Number(process.hrtime.bigint() - t) / 6e5; };
  const base = T((i) => { sink += effectOf(i).kind.length; });
  const forin = T((i) => { sink += isPlain(effectOf(i).params) ? 1 : 0; });
  const get = T((i) => { const e = effectOf(i); sink += m.get(keys[i]) ? 1 : 0; });
  const cmp = T((i) => { const e = effectOf(i); sink += e.params.message === msgs[i] ? 1 : 0; });
  const cmpLen = T((i) => { const e = effectOf(i); sink += e.params.message.length === msgs[i].length ? 1 : 0; });
  console.log(`effect ${base.toFixed(0)}; forin +${(forin - base).toFixed(0)}; get +${(get - base).toFixed(0)}; msg=== +${(cmp - base).toFixed(0)}; len +${(cmpLen - base).toFixed(0)}`);
}
