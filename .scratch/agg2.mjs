// node agg2.mjs prof ops [top]
import { readFileSync } from "node:fs";
const p = JSON.parse(readFileSync(process.argv[2])); const ops = Number(process.argv[3]); const top = Number(process.argv[4] ?? 40);
const dt = new Map(); for (let i = 0; i < p.samples.length; i++) dt.set(p.samples[i], (dt.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
const self = new Map();
for (const n of p.nodes) { const f = n.callFrame; const k = `${f.functionName || "(anon)"} ${f.url.split("/").slice(-2).join("/")}:${f.lineNumber + 1}`; self.set(k, (self.get(k) ?? 0) + (dt.get(n.id) ?? 0)); }
const total = [...self.values()].reduce((a, b) => a + b, 0);
console.log(`total ${(total / ops).toFixed(2)} µs/op`);
for (const [k, t] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${(t / ops).toFixed(2).padStart(8)} ${(100 * t / total).toFixed(1).padStart(5)}% ${k}`);
