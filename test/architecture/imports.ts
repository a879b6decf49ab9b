import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's `src/`, as an absolute path. */
export const SRC = resolve(dirname(fileURLToPath(import.meta.url)), "../../src");

/** Every TypeScript file under `dir`, as paths relative to `SRC` with forward slashes. */
export function sourceFiles(dir = SRC): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (entry.name.endsWith(".ts")) out.push(relative(SRC, path).split("\\").join("/"));
  }
  return out.sort();
}

// Static imports and re-exports, type-only ones included (a circle through a type is still a
// circle for a reader), and dynamic `import("./x.js")` with a literal specifier.
const SPECIFIER = /(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g;

/** The `src/` files one file imports (relative specifiers only), relative to `SRC`. */
export function importsOf(file: string): string[] {
  const text = readFileSync(join(SRC, file), "utf8");
  const found: string[] = [];
  for (const match of text.matchAll(SPECIFIER)) {
    const spec = match[1] ?? match[2]!;
    if (!spec.startsWith(".")) continue;
    const target = relative(SRC, resolve(SRC, dirname(file), spec.replace(/\.js$/, ".ts")))
      .split("\\")
      .join("/");
    found.push(target);
  }
  return found;
}

/** One import circle (the files in order, the first repeated at the end), or undefined. */
export function findCircle(graph: Map<string, string[]>): string[] | undefined {
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (node: string): string[] | undefined => {
    state.set(node, "open");
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === "open") return [...path.slice(path.indexOf(next)), next];
      if (state.get(next) === undefined) {
        const circle = visit(next);
        if (circle) return circle;
      }
    }
    path.pop();
    state.set(node, "done");
    return undefined;
  };
  for (const node of graph.keys()) {
    if (state.get(node) === undefined) {
      const circle = visit(node);
      if (circle) return circle;
    }
  }
  return undefined;
}
