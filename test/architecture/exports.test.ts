import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SRC } from "./imports.js";

// The public surface, held on purpose: every name each entry point exports, values and types.
// A change here is a change to what users may import — make it deliberately, then update
// test/architecture/exports.json in the same commit.
const expected = JSON.parse(readFileSync(join(SRC, "../test/architecture/exports.json"), "utf8")) as Record<string, { values: string[]; types: string[] }>;
const pkg = JSON.parse(readFileSync(join(SRC, "../package.json"), "utf8")) as { exports: Record<string, string | { "mcp-yield-source"?: string }> };

/** The names a source file exports, by kind, read from its export statements. */
function declaredExports(file: string): { values: string[]; types: string[] } {
  const text = readFileSync(join(SRC, "..", file), "utf8");
  const values = new Set<string>();
  const types = new Set<string>();
  expect(text, `${file} must list its exports (no export *)`).not.toMatch(/export \* from/);
  for (const m of text.matchAll(/export (type )?\{([^}]*)\}/g)) {
    for (const raw of m[2]!.split(",")) {
      const item = raw.trim();
      if (item === "") continue;
      const name = item
        .replace(/^type /, "")
        .split(/\s+as\s+/)
        .pop()!
        .trim();
      (m[1] !== undefined || item.startsWith("type ") ? types : values).add(name);
    }
  }
  for (const m of text.matchAll(/export (?:async )?(function\*?|const|let|class|interface|type) ([A-Za-z_$][\w$]*)/g)) {
    (m[1] === "interface" || m[1] === "type" ? types : values).add(m[2]!);
  }
  return { values: [...values].sort(), types: [...types].sort() };
}

const entries = Object.entries(pkg.exports)
  .filter(([name]) => name !== "./package.json")
  .map(([name, target]) => [name, typeof target === "string" ? target : target["mcp-yield-source"]!] as const);

describe("the public surface", () => {
  it("package.json exports exactly the entry points the snapshot knows, and no internal seam", () => {
    expect(entries.map(([name]) => name).sort()).toEqual(Object.keys(expected).sort());
    expect(entries.some(([, file]) => file.includes("internal"))).toBe(false);
  });

  it.each(entries)("%s exports exactly the names in exports.json", async (name, file) => {
    const declared = declaredExports(file);
    expect(declared, `${name} (${file}) changed its exports: if deliberate, update test/architecture/exports.json`).toEqual(expected[name]);
    // What the module really exports at run time is what its export statements say.
    const loaded = (await import(/* @vite-ignore */ join(SRC, "..", file))) as Record<string, unknown>;
    expect(Object.keys(loaded).sort()).toEqual(declared.values);
  });
});
