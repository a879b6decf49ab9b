// `npm run bench:instances`: only the three-instances-without-affinity rows of the bench.
import { instancesSection } from "./sections.js";

const runs = Number(process.env.BENCH_RUNS ?? 5);
for (const r of await instancesSection(runs)) {
  console.log(
    `R = ${r.rounds}: default ${r.us.live.toFixed(0)} µs, liveCalls 0 ${r.us.stateless.toFixed(0)} µs, hand-written ${r.us.handWritten.toFixed(0)} µs; a/b ${r.liveVsHandWritten.toFixed(2)} (liveCalls 0: ${r.statelessVsHandWritten.toFixed(2)}), default / liveCalls 0 ${r.liveVsStateless.toFixed(2)}`,
  );
}
