// Runs one benchmark section and prints its rows as JSON (run.ts starts one process per
// repetition, so each repetition gets a fresh JIT and heap).
import { codecSection, replaySection } from "./sections.js";

const name = process.argv[2];
const rows = name === "replay" ? await replaySection() : name === "codec" ? await codecSection() : undefined;
if (rows === undefined) {
  console.error(`unknown section ${name}`);
  process.exit(2);
}
process.stdout.write(JSON.stringify(rows));
