import { dashboardCommand, dashboardUsage } from "./dashboard.js";
import { exportCommand, exportUsage } from "./export.js";
import { type CliInput, processInput } from "./input.js";
import { inspectCommand, inspectUsage } from "./inspect.js";
import { keygen, keygenUsage } from "./keygen.js";
import { tasksCommand, tasksUsage } from "./tasks.js";
import { redactText } from "../store/bounded.js";
import { terminalSafe } from "../util/terminal.js";

// `npx mcp-yield <command>`: tools for people running mcp-yield servers — which command runs,
// and the usage text all of them share.

const usage = `Usage:
${keygenUsage}
${inspectUsage}
${tasksUsage}
${dashboardUsage}
${exportUsage}`;

/** Each command's usage: what `mcp-yield <command> --help` and `mcp-yield help <command>` print. */
const USAGE: Readonly<Record<string, string>> = { keygen: keygenUsage, inspect: inspectUsage, tasks: tasksUsage, dashboard: dashboardUsage, export: exportUsage };

/** Whether the arguments ask for help (`--help` or `-h` before a `--`: no task id or token starts with "-"). */
function asksHelp(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === "--help" || a === "-h");
}

/**
 * Run one command line; its output through `out`, errors through `err` — every line made safe
 * for a terminal (controls and bidirectional overrides escaped), errors without passwords —
 * resolves to the exit code.
 */
export async function main(argv: readonly string[], write: (line: string) => void, writeError: (line: string) => void, input: CliInput = processInput): Promise<number> {
  const out = (line: string) => write(terminalSafe(line));
  const err = (line: string) => writeError(terminalSafe(redactText(line)));
  const [command, ...rest] = argv;
  if (command !== undefined && Object.hasOwn(USAGE, command) && asksHelp(rest)) {
    out(`Usage:\n${USAGE[command]}`);
    return 0;
  }
  if (command === "help" && rest.length > 0) {
    const usage = Object.hasOwn(USAGE, rest[0]!) ? USAGE[rest[0]!] : undefined;
    if (usage === undefined) {
      err(`no command ${JSON.stringify(rest[0])}: one of ${Object.keys(USAGE).join(", ")}`);
      return 2;
    }
    out(`Usage:\n${usage}`);
    return 0;
  }
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
      case "dashboard":
        return await dashboardCommand(rest, input.env, out);
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
