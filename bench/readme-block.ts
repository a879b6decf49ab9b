import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const README = fileURLToPath(new URL("../README.md", import.meta.url));

/**
 * Replace what a markdown file (README.md by default) holds between `<!-- name:start -->` and `<!-- name:end -->` with
 * `body`. Only `--readme` runs call this: a plain run leaves tracked files alone.
 */
export function updateReadmeBlock(name: string, body: string, readme = README): void {
  const text = readFileSync(readme, "utf8");
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from === -1 || to < from) throw new Error(`${readme} has no ${start} … ${end} block`);
  writeFileSync(readme, `${text.slice(0, from + start.length)}\n${body.trim()}\n${text.slice(to)}`);
}
