import { formatStateReport, inspectState } from "../journal/inspect.js";
import { createStateCodec, parseKeyRing, StateError } from "../state/index.js";
import type { CliInput } from "./input.js";

// `mcp-yield inspect`: open a requestState with the server's key ring and show what it holds.

export const inspectUsage = `  mcp-yield inspect <token|-> [--json]
                                     open a requestState with the key ring in MCP_YIELD_KEYS and show what it holds:
                                     claims, binding, round, call id, the journal record by record, outstanding asks
                                     ("-" reads the token from stdin; --json prints it for machines). Integrity is
                                     checked: a token from another key ring, or altered, is refused. No secret is printed.`;

export async function inspectCommand(args: readonly string[], input: CliInput, out: (line: string) => void): Promise<void> {
  const json = args.includes("--json");
  const positional = args.filter((a) => a !== "--json");
  if (positional.length !== 1) throw new TypeError("inspect takes one token (or - to read it from stdin)");
  const token = (positional[0] === "-" ? await input.stdin() : positional[0]!).trim();
  // Either mode opens both kinds of token; the mode only decides what a codec mints.
  const codec = createStateCodec({ keys: parseKeyRing(input.env.MCP_YIELD_KEYS) });
  try {
    const report = inspectState(codec, token);
    if (json) out(JSON.stringify(report, null, 2));
    else for (const line of formatStateReport(report)) out(line);
  } catch (error) {
    if (error instanceof StateError) throw new Error(`the token was refused (${error.reason}): ${error.message}`);
    throw error;
  }
}
