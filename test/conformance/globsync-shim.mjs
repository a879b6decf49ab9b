// Node 20 lacks fs.globSync, which the conformance CLI imports at start (it uses it only in
// its `tier-check` command). This loader hands the conformance package an `fs` that has a stub
// globSync and is otherwise the real module, so the suite runs unchanged.
// Use: node --import ./test/conformance/globsync-shim.mjs <conformance cli> ...
import { register } from "node:module";

register(
  "data:text/javascript," +
    encodeURIComponent(`
const SHIM = "mcp-yield-shim:fs";
export async function resolve(specifier, context, next) {
  if ((specifier === "fs" || specifier === "node:fs") && context.parentURL?.includes("/@modelcontextprotocol/conformance/")) {
    return { url: SHIM, shortCircuit: true };
  }
  return next(specifier, context);
}
export async function load(url, context, next) {
  if (url !== SHIM) return next(url, context);
  const source = [
    'import fs from "node:fs";',
    'export * from "node:fs";',
    'export default fs;',
    'export function globSync() { throw new Error("globSync is not available on this Node version"); }',
  ].join("\\n");
  return { format: "module", source, shortCircuit: true };
}
`),
);
