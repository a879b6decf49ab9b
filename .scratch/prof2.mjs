// node prof2.mjs tree factory argsJSON secs out
import { Session } from "node:inspector/promises";
import { writeFileSync } from "node:fs";
const [tree, factory, args, secs, out] = process.argv.slice(2);
const v = await import(`${tree}/bench/.build/bench/variants.js`);
const op = await v[factory](...JSON.parse(args));
for (let i = 0; i < 15000; i++) await op();
const s = new Session(); s.connect();
await s.post("Profiler.enable"); await s.post("Profiler.setSamplingInterval", { interval: 100 });
await s.post("Profiler.start");
let n = 0; const end = Date.now() + Number(secs) * 1000;
while (Date.now() < end) { for (let i = 0; i < 100; i++) await op(); n += 100; }
const { profile } = await s.post("Profiler.stop");
writeFileSync(out, JSON.stringify(profile)); console.log(JSON.stringify({ ops: n }));
process.exit(0);
