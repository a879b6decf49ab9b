import { parseArgs } from "node:util";

type OptionSpec = Record<string, { type: "string" | "boolean" }>;
/** What the options parsed to: a string option's text, a boolean option's presence. */
type OptionValues<O extends OptionSpec> = { [K in keyof O]?: O[K]["type"] extends "string" ? string : boolean };

/**
 * `parseArgs` for commands that take ids: a task id is base64url and may begin with "-", which
 * `parseArgs` would take for an option. The commands define long options only, so anything that
 * starts with a single "-" (and is not "-" alone, which means stdin) is a positional here; a long
 * option's value is the argument after it, whatever it looks like.
 */
export function parseCommand<O extends OptionSpec>(args: readonly string[], options: O): { values: OptionValues<O>; positionals: string[] } {
  const flags: string[] = [];
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith("--")) {
      positionals.push(arg);
      continue;
    }
    const name = arg.slice(2).split("=")[0]!;
    // "--name value" as "--name=value": the value is taken as it is, even when it starts with "-".
    if (!arg.includes("=") && options[name]?.type === "string" && i + 1 < args.length) flags.push(`${arg}=${args[++i]!}`);
    else flags.push(arg);
  }
  const parsed = parseArgs({ args: [...flags, "--", ...positionals], allowPositionals: true, options, strict: true });
  return { values: parsed.values as OptionValues<O>, positionals: parsed.positionals };
}
