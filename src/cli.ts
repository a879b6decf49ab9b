#!/usr/bin/env node
// `npx mcp-yield <command>`: tools for people running mcp-yield servers.
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createStateCodec, encodeBase64url, parseKeyRing, randomBytes, StateError } from "./state/index.js";
import { formatStateReport, inspectState } from "./journal/inspect.js";
import { exportCommand, exportUsage } from "./cli/export.js";
import { tasksCommand, tasksUsage } from "./cli/tasks.js";

const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

const usage = `Usage:
  mcp-yield keygen [id]              print a new key ring entry, id:secret (32 random bytes), for MCP_YIELD_KEYS
                                     (default id: k<yyyymmdd>-<6 random characters>, unique even for two keys made
                                     the same day; give each key its own id so rotation can tell them apart)
  mcp-yield inspect <token|-> [--json]
                                     open a requestState with the key ring in MCP_YIELD_KEYS and show what it holds:
                                     claims, binding, round, call id, the journal record by record, outstanding asks
                                     ("-" reads the token from stdin; --json prints it for machines). Integrity is
                                     checked: a token from another key ring, or altered, is refused. No secret is printed.
${tasksUsage}
${exportUsage}`;

/**
 * A new key ring entry `id:secret`, the format `parseKeyRing` and MCP_YIELD_KEYS take. The
 * default id is the day plus random characters: two keys made the same day must not share an id
 * (a token would then be checked with the wrong secret: `bad_signature`).
 */
export function keygen(id = `k${new Date().toISOString().slice(0, 10).replaceAll("-", "")}-${encodeBase64url(randomBytes(6)).slice(0, 6)}`): string {
  if (!KEY_ID.test(id)) throw new TypeError(`key id must be 1-32 characters of [A-Za-z0-9_-], got ${JSON.stringify(id)}`);
  return `${id}:${encodeBase64url(randomBytes(32))}`;
}

/** What the commands read from outside: the environment and stdin. */
export interface CliInput {
  env: Record<string, string | undefined>;
  stdin: () => Promise<string>;
}

const processInput: CliInput = {
  env: process.env,
  stdin: async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  },
};

async function inspect(args: readonly string[], input: CliInput, out: (line: string) => void): Promise<void> {
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

export async function main(argv: readonly string[], out: (line: string) => void, err: (line: string) => void, input: CliInput = processInput): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case "keygen":
        out(keygen(rest[0]));
        return 0;
      case "inspect":
        await inspect(rest, input, out);
        return 0;
      case "tasks":
        return await tasksCommand(rest, input.env, out);
      case "export":
        return await exportCommand(rest, input.env, input.stdin, out);
      case undefined:
      case "help":
      case "--help":
      case "-h":
        out(usage);
        return 0;
      default:
        err(`unknown command ${JSON.stringify(command)}\n${usage}`);
        return 2;
    }
  } catch (error) {
    err(`mcp-yield ${command}: ${(error as Error).message}`);
    return 1;
  }
}

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
