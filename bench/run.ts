// `npm run bench`: every comparison in one run, alternating, reported as ratios.
// Writes bench/results.json and bench/replay.svg and prints the tables the README quotes.
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { replayChart } from "./chart.js";
import { httpSection } from "./http-load.js";
import { type CodecRow, type ReplayRow, sizeSection } from "./sections.js";

const run = promisify(execFile);
const here = (f: string) => fileURLToPath(new URL(f, import.meta.url));
const repeats = Number(process.env.BENCH_REPEATS ?? 3);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const f = (n: number, d = 2) => n.toFixed(d);

/** Run a section in `repeats` fresh processes; per metric, the median across them. */
async function repeated<T extends Record<string, unknown>>(name: string, keyOf: (row: T) => number): Promise<T[]> {
  const runs: T[][] = [];
  for (let i = 0; i < repeats; i++) {
    const { stdout } = await run(process.execPath, [here("./section.js"), name], { maxBuffer: 1 << 24 });
    runs.push(JSON.parse(stdout) as T[]);
    process.stderr.write(`  ${name} ${i + 1}/${repeats}\n`);
  }
  const merge = (rows: unknown[]): unknown => {
    const first = rows[0];
    if (typeof first === "number") return median(rows as number[]);
    if (first && typeof first === "object") return Object.fromEntries(Object.keys(first).map((k) => [k, merge(rows.map((r) => (r as Record<string, unknown>)[k]))]));
    return first;
  };
  return runs[0]!.map((row) => merge(runs.map((r) => r.find((x) => keyOf(x) === keyOf(row)))) as T);
}

const started = Date.now();
process.stderr.write("replay...\n");
const replay = await repeated<ReplayRow & Record<string, unknown>>("replay", (r) => r.rounds);
process.stderr.write("codec...\n");
const codec = await repeated<CodecRow & Record<string, unknown>>("codec", (r) => r.records);
process.stderr.write("state size...\n");
const size = await sizeSection();
process.stderr.write("http...\n");
const http = await httpSection();

const machine = { node: process.version, cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? "?"}`, platform: `${os.platform()} ${os.arch()}`, date: new Date().toISOString().slice(0, 10) };
const results = { machine, repeats, seconds: Math.round((Date.now() - started) / 1000), replay, codec, size, http };
writeFileSync(here("../../../bench/results.json"), `${JSON.stringify(results, null, 2)}\n`);
writeFileSync(here("../../../bench/replay.svg"), `${replayChart(replay, "Server CPU per call (median of alternating batches)")}\n`);

const lines: string[] = [];
lines.push(`Machine: ${machine.cpus}, ${machine.platform}, Node ${machine.node}, ${machine.date}. Medians of ${repeats} processes.`);
lines.push("", "Replay — server CPU per whole call of R rounds (µs) and ratios (target a/b ≤ 1.15 at R=3, ≤ 1.5 at R=30):", "");
lines.push("| R | (a) generator | (b) hand-written, our codec | (c) SDK inputRequired + codec | a/b | a/c |", "|---|---|---|---|---|---|");
for (const r of replay) lines.push(`| ${r.rounds} | ${f(r.generatorUs, 0)} | ${f(r.handWrittenUs, 0)} | ${f(r.sdkUs, 0)} | ${f(r.vsHandWritten)} | ${f(r.vsSdk)} |`);
lines.push("", "Codec — seal + open per round (µs), journal of N records (target ≤ 1.5× floor at 10, faster than the SDK):", "");
lines.push("| records | floor (JSON + 1 HMAC) | sealed | signed | SDK codec | sealed/floor | signed/floor | sealed/SDK | token bytes (sealed / SDK) |", "|---|---|---|---|---|---|---|---|---|");
for (const r of codec) lines.push(`| ${r.records} | ${f(r.us.floor, 1)} | ${f(r.us.sealed, 1)} | ${f(r.us.signed, 1)} | ${f(r.us.sdk, 1)} | ${f(r.sealedVsFloor)} | ${f(r.signedVsFloor)} | ${f(r.sealedVsSdk)} | ${r.tokenBytes.sealed} / ${r.tokenBytes.sdk} |`);
lines.push("", "State size per round (bytes) against the raw JSON of the answers recorded so far:", "");
lines.push("| tool | round | requestState | answers JSON |", "|---|---|---|---|");
for (const r of size) lines.push(`| ${r.tool} | ${r.round} | ${r.stateBytes} | ${r.answersJsonBytes} |`);
lines.push("", `HTTP — completed ${http.rounds}-ask calls per second, ${http.concurrency} concurrent clients, same SDK server (target ≥ 0.95):`, "");
lines.push("| generator | hand-written | ratio |", "|---|---|---|", `| ${f(http.generatorCallsPerSec, 0)} | ${f(http.handWrittenCallsPerSec, 0)} | ${f(http.ratio)} |`);
console.log(lines.join("\n"));
process.stderr.write(`done in ${results.seconds}s: bench/results.json, bench/replay.svg\n`);
