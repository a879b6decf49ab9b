import { Round } from "./dist/runtime/replay.js";
import { countGenerator } from "./bench/.build/bench/counting-tools.js";
import { createRuntime } from "mcp-yield";
// Get a real journal at round 30 via the runtime.
const keys = [{ id: "bench", secret: new Uint8Array(32).fill(42) }];
const runtime = createRuntime({ state: { keys }, liveCalls: 0 });
let p = { name: "count", arguments: { rounds: 30 } }; let last;
for (let r = 0; r < 30; r++) { const res = await runtime.callTool(countGenerator, p, { clientCapabilities: { elicitation: {} } }); last = res; p = { name: "count", arguments: { rounds: 30 }, requestState: res.requestState, inputResponses: Object.fromEntries(Object.keys(res.inputRequests).map(k => [k, { action: "accept", content: { n: 1 } }])) }; }
const opened = runtime.codec.inspect(last.requestState);
const lines = opened.body.split("\n").filter(Boolean).map(l => l.split("\t"));
console.log(lines.length, lines[0]);
const input = { start: () => countGenerator.run({ rounds: 30 }, {}), journal: lines, format: 2, outstanding: opened.data.o, partial: {}, responses: new Map(), declared: () => true, signal: () => new AbortController().signal, randomUUID: () => "x", clock: Date.now, task: "foreground" };
const N = 20000;
for (let i = 0; i < 2000; i++) await new Round({ ...input, journal: lines.map(l => [l[0], l[1]]) }).run();
const t = process.cpuUsage();
for (let i = 0; i < N; i++) await new Round({ ...input, journal: lines.map(l => [l[0], l[1]]) }).run();
const u = process.cpuUsage(t);
console.log(`per replay of ${lines.length} asks: ${((u.user+u.system)/N).toFixed(2)} µs, per ask ${((u.user+u.system)/N/lines.length*1000).toFixed(0)} ns`);
const codec = runtime.codec;
const binding = { method: "tools/call", target: "count", arguments: { rounds: 30 }, argumentsDigest: (await import("mcp-yield")).digestOf({ rounds: 30 }) };
function bench(name, f) { for (let i=0;i<2e4;i++) f(); const t=process.cpuUsage(); const N=1e5; for (let i=0;i<N;i++) f(); const u=process.cpuUsage(t); console.log(name.padEnd(40), ((u.user+u.system)*1000/N).toFixed(0), "ns"); }
const tok = last.requestState;
console.log("token", tok.length);
const small = codec.seal({ binding, data: { i: 3, sum: 3 } });
bench("open R30 token", () => codec.open(tok, binding));
bench("open small token", () => codec.open(small, binding));
const { parseLines } = await import("./dist/runtime/journal.js");
bench("parseLines", () => parseLines(opened.body));
bench("seal R30 body", () => codec.seal({ binding, data: opened.data, body: opened.body }));
bench("seal small", () => codec.seal({ binding, data: { i: 3, sum: 3 } }));
