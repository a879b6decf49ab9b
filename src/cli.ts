#!/usr/bin/env node
// `npx mcp-yield <command>`: the command's entry point. The commands live in cli/.
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { main } from "./cli/main.js";

export { keygen } from "./cli/keygen.js";
export type { CliInput } from "./cli/input.js";
export { main } from "./cli/main.js";

/**
 * Whether this module is the script node was started with — through npm's bin symlink
 * (`npx mcp-yield`, `node_modules/.bin/mcp-yield`) as well as by its own path: both sides resolved
 * to real paths. Not when imported (tests).
 */
function invokedDirectly(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (invokedDirectly()) {
  process.exitCode = await main(
    process.argv.slice(2),
    (l) => console.log(l),
    (l) => console.error(l),
  );
}
