import { callToolParams, clientCapabilities } from "mcp-yield";
import { statePayload } from "../src/runtime/journal.js";
import { countGenerator } from "./counting-tools.js";
function t(name: string, f: () => unknown, n = 100000) { for (let i = 0; i < 5000; i++) f(); const s = process.hrtime.bigint(); for (let i = 0; i < n; i++) f(); console.log(name.padEnd(24), (Number(process.hrtime.bigint() - s) / n / 1000).toFixed(2), "us"); }
const params = { name: "count", arguments: { rounds: 3 }, inputResponses: { "elicit-0": { action: "accept", content: { n: 1 } } }, requestState: "y1e.bench.xxxxxxxx", _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } };
t("callToolParams", () => callToolParams.safeParse(params));
t("input parse", () => countGenerator.input.safeParse({ rounds: 3 }));
t("clientCapabilities", () => clientCapabilities.safeParse({ elicitation: {}, sampling: {} }));
const payload = { r: 2, c: "0f8b5c1e-7c1d-4f7e-9a55-3d2c1b0a9f8e", j: Array.from({ length: 3 }, (_, i) => [`elicit:elicit-${i}:AbCdEfGhIjKl`, { action: "accept", content: { n: i } }]), o: { a: "b" } };
t("statePayload(3)", () => statePayload.safeParse(payload));
t("randomUUID", () => crypto.randomUUID());
t("new AbortController", () => new AbortController().signal);
