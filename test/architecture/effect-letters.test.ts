import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ASK_KINDS, EFFECT_KINDS, LETTER } from "../../src/authoring/effect-kinds.js";
import { SRC, sourceFiles } from "./imports.js";

// Fingerprint letters are the journal's format: spelled once, in authoring/effect-kinds.ts.

describe("effect letters", () => {
  it("are one per kind, all different, and include every ask kind's and ctx.can's", () => {
    const letters = Object.values(LETTER);
    expect(new Set(letters).size).toBe(letters.length);
    expect(Object.keys(LETTER).sort()).toEqual([...Object.keys(EFFECT_KINDS), "can"].sort());
    for (const [kind, row] of Object.entries(ASK_KINDS)) expect(LETTER[kind as keyof typeof ASK_KINDS]).toBe(row.letter);
  });

  it("are spelled nowhere else in the layers that read journals", () => {
    const layers = ["journal/", "replay/", "tasks/", "runtime/", "testing/", "cli/"];
    // The letters of the effects the runtime answers itself (upper case: asks' lower-case letters
    // share their alphabet with recorded outcomes, `a`ccept, `d`ecline, `c`ancel).
    const own = Object.values(LETTER)
      .filter((l) => l !== l.toLowerCase())
      .join("");
    const spelled = new RegExp(`(?:\`[${own}]\\$\\{|["'\`][${own}]#|(?:===|case) "[${own}]")`);
    const found = sourceFiles()
      .filter((f) => layers.some((l) => f.startsWith(l)))
      .flatMap((f) =>
        readFileSync(join(SRC, f), "utf8")
          .split("\n")
          .map((line, i) => [f, i + 1, line] as const)
          .filter(([, , line]) => spelled.test(line) && !line.trimStart().startsWith("*") && !line.trimStart().startsWith("//")),
      )
      .map(([f, n, line]) => `${f}:${n}: ${line.trim()}`);
    expect(found).toEqual([]);
  });
});
