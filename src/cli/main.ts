import { exportCommand, exportUsage } from "./export.js";
import { type CliInput, processInput } from "./input.js";
import { inspectCommand, inspectUsage } from "./inspect.js";
import { keygen, keygenUsage } from "./keygen.js";
import { tasksCommand, tasksUsage } from "./tasks.js";

// `npx mcp-yield <command>`: tools for people running mcp-yield servers — which command runs,
// and the usage text all of them share.

const usage = `Usage:
${keygenUsage}
${inspectUsage}
${tasksUsage}
${exportUsage}`;

/** Run one command line; its output through `out`, errors through `err`; resolves to the exit code. */
export async function main(argv: readonly string[], out: (line: string) => void, err: (line: string) => void, input: CliInput = processInput): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case "keygen":
        out(keygen(rest[0]));
        return 0;
      case "inspect":
        await inspectCommand(rest, input, out);
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
