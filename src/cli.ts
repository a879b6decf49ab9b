#!/usr/bin/env node
// `npx mcp-yield <command>`: tools for people running mcp-yield servers.
import { encodeBase64url, randomBytes } from "./state/index.js";

const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

const usage = `Usage:
  mcp-yield keygen [id]   print a new key ring entry, id:secret (32 random bytes), for MCP_YIELD_KEYS
                          (default id: k<yyyymmdd>; give each key its own id so rotation can tell them apart)`;

/** A new key ring entry `id:secret`, the format `parseKeyRing` and MCP_YIELD_KEYS take. */
export function keygen(id = `k${new Date().toISOString().slice(0, 10).replaceAll("-", "")}`): string {
  if (!KEY_ID.test(id)) throw new TypeError(`key id must be 1-32 characters of [A-Za-z0-9_-], got ${JSON.stringify(id)}`);
  return `${id}:${encodeBase64url(randomBytes(32))}`;
}

export function main(argv: readonly string[], out: (line: string) => void, err: (line: string) => void): number {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case "keygen":
        out(keygen(rest[0]));
        return 0;
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

// Run when executed (not when imported by tests).
if (process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  process.exitCode = main(process.argv.slice(2), (l) => console.log(l), (l) => console.error(l));
}
