// Profiling aid: one variant in a tight loop (node --cpu-prof bench/.build/bench/prof-replay.js gen 3).
import { createRuntime } from "mcp-yield";
import { countGenerator, driveCall, handWrittenCount } from "./counting-tools.js";

const keys = [{ id: "b", secret: new Uint8Array(32).fill(1) }];
const runtime = createRuntime({ state: { keys } });
const gen = (p: never) => runtime.callTool(countGenerator, p, { clientCapabilities: { elicitation: {} } });
const hand = handWrittenCount(keys);
const call = (process.argv[2] === "hand" ? hand : gen) as never;
const R = Number(process.argv[3] ?? 3);
const N = Number(process.argv[4] ?? 3000);
for (let i = 0; i < 200; i++) await driveCall(call, R);
const t = process.hrtime.bigint();
for (let i = 0; i < N; i++) await driveCall(call, R);
console.log(`${process.argv[2] ?? "gen"} R=${R}: ${(Number(process.hrtime.bigint() - t) / N / 1000).toFixed(1)} us per call`);
