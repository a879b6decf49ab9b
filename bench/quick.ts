import { compare } from "./harness.js";
import { codecSection, replaySection, sizeSection } from "./sections.js";
import { createRuntime } from "mcp-yield";
import { countGenerator, driveCall, handWrittenCount } from "./counting-tools.js";
const which = process.argv[2] ?? "all";
if (which === "all" || which === "replay") console.table(await replaySection());
if (which === "all" || which === "codec") for (const r of await codecSection()) console.log(r.records, JSON.stringify(r.us), r.sealedVsFloor.toFixed(2), r.signedVsFloor.toFixed(2), r.sealedVsSdk.toFixed(2));
if (which === "all" || which === "size") console.table(await sizeSection());
if (which === "r") {
  const keys = [{ id: "b", secret: new Uint8Array(32).fill(1) }];
  const runtime = createRuntime({ state: { keys } });
  const gen = (p: never) => runtime.callTool(countGenerator, p, { clientCapabilities: { elicitation: {} } });
  const hand = handWrittenCount(keys);
  const R = Number(process.argv[3] ?? 1);
  console.table(await compare([{ name: "gen", run: () => driveCall(gen as never, R) }, { name: "hand", run: () => driveCall(hand as never, R) }], { batches: 30 }));
}
