const msgs = Array.from({ length: 30 }, (_, i) => (" " + `Number ${i + 1} of 30?`).slice(1));
const mm = new Map(msgs.map((x, i) => [x, i]));
let sink = 0;
const mk = (i) => `Number ${i + 1} of 30?`;
function loopEq(a, b) { if (a.length !== b.length) return false; for (let i = 0; i < a.length; i++) if (a.charCodeAt(i) !== b.charCodeAt(i)) return false; return true; }
for (let rep = 0; rep < 6; rep++) {
  const T = (f) => { const t = process.hrtime.bigint(); for (let k = 0; k < 20000; k++) for (let i = 0; i < 30; i++) f(i); return Number(process.hrtime.bigint() - t) / 6e5; };
  const base = T((i) => { sink += mk(i).length; });
  const eq = T((i) => { sink += mk(i) === msgs[i] ? 1 : 0; });
  const loop = T((i) => { sink += loopEq(mk(i), msgs[i]) ? 1 : 0; });
  const sw = T((i) => { const m = mk(i); sink += m.length === msgs[i].length && m.startsWith(msgs[i]) ? 1 : 0; });
  const get = T((i) => { sink += mm.get(mk(i)) ?? 0; });
  const eq2 = T((i) => { const m = mk(i); sink += m === msgs[i] && m === msgs[i] ? 1 : 0; });
  console.log(`make ${base.toFixed(0)}; === +${(eq - base).toFixed(0)}; loop +${(loop - base).toFixed(0)}; startsWith +${(sw - base).toFixed(0)}; map +${(get - base).toFixed(0)}; ===twice +${(eq2 - base).toFixed(0)}`);
}
