import type { CliInput } from "../../src/cli.js";
import { main } from "../../src/cli.js";

/** What one command line printed, and its exit code. */
export interface CliRun {
  code: number;
  out: string;
  err: string;
}

/** Run `npx mcp-yield <argv>` in process, with this environment and standard input; its lines joined. */
export async function runCli(argv: string[], input: CliInput): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(
    argv,
    (l) => out.push(l),
    (l) => err.push(l),
    input,
  );
  return { code, out: out.join("\n"), err: err.join("\n") };
}
