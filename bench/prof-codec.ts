import { createStateCodec } from "mcp-yield";
const keys = [{ id: "bench", secret: new Uint8Array(32).fill(42) }];
const codec = createStateCodec({ keys, mode: process.argv[2] === "signed" ? "signed" : "sealed" });
const binding = { method: "tools/call" as const, target: "count", arguments: { rounds: 3 } };
const data = { r: 10, c: "0f8b5c1e-7c1d-4f7e-9a55-3d2c1b0a9f8e", j: Array.from({ length: 10 }, (_, i) => [`elicit:elicit-${i}:AbCdEfGhIjKlMnOp`, { action: "accept", content: { n: i } }]), o: { x: "y" } };
const t = process.hrtime.bigint();
const N = 40000;
for (let i = 0; i < N; i++) codec.open(codec.seal({ binding, data }), binding);
console.log("us/op", Number(process.hrtime.bigint() - t) / N / 1000);
