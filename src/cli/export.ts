import { writeFileSync } from "node:fs";
import { fixtureFromState, type JournalFixture } from "../journal/fixture.js";
import { createStateCodec, parseKeyRing, StateError } from "../state/index.js";
import { createTaskAdmin } from "../tasks/admin/admin.js";
import { parseCommand } from "./args.js";
import { openStore, STORE_OPTIONS } from "./store.js";

export const exportUsage = `  mcp-yield export <requestState | task id> [--arguments JSON] [--out FILE]
                                     save a call's journal as a fixture (JSON: tool, input, records, where the call
                                     stood; no key, principal or token) for replayFixtures in mcp-yield/testing.
                                     A requestState is opened with MCP_YIELD_KEYS and carries only its arguments'
                                     digest: give --arguments (checked against it). A task id is read from the
                                     store (--redis / --redis-cluster / --postgres or the environment, as for tasks).`;

const TOKEN = /^y\d[es]\./;

/** `mcp-yield export …`; returns the exit code. */
export async function exportCommand(args: readonly string[], env: Record<string, string | undefined>, stdin: () => Promise<string>, out: (line: string) => void): Promise<number> {
  const { values, positionals } = parseCommand(args, { ...STORE_OPTIONS, arguments: { type: "string" }, out: { type: "string" } });
  if (positionals.length !== 1) throw new TypeError("export takes one requestState or task id (- reads it from stdin)");
  const what = (positionals[0] === "-" ? await stdin() : positionals[0]!).trim();
  let fixture: JournalFixture;
  if (TOKEN.test(what)) {
    let given: Record<string, unknown> | undefined;
    if (values.arguments !== undefined) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(values.arguments);
      } catch (error) {
        throw new TypeError(`--arguments is not JSON: ${(error as Error).message}`);
      }
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new TypeError("--arguments must be a JSON object (the tool call's arguments)");
      given = parsed as Record<string, unknown>;
    }
    const codec = createStateCodec({ keys: parseKeyRing(env.MCP_YIELD_KEYS) });
    try {
      fixture = fixtureFromState(codec, what, given);
    } catch (error) {
      if (error instanceof StateError) throw new Error(`the token was refused (${error.reason}): ${error.message}`);
      throw error;
    }
  } else {
    if (values.arguments !== undefined) throw new TypeError("--arguments is for a requestState; a task keeps its own input");
    const store = await openStore(values, env);
    try {
      const found = await createTaskAdmin({ store }).exportFixture(what);
      if (found === undefined) throw new Error(`no task ${JSON.stringify(what)} in this store (never made, or expired)`);
      fixture = found;
    } finally {
      await store.close();
    }
  }
  const text = `${JSON.stringify(fixture, null, 2)}\n`;
  if (values.out !== undefined) {
    writeFileSync(values.out, text);
    out(`wrote ${values.out}: ${fixture.tool}, ${fixture.records.length} records, ${fixture.end.at === "ask" ? "waiting for an answer" : fixture.end.at === "complete" ? "completed" : "still going"}`);
  } else out(text.trimEnd());
  return 0;
}
