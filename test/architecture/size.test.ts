import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { SRC, sourceFiles } from "./imports.js";

// The size bounds ARCHITECTURE.md states: no file over 500 lines, no class over 300, no folder's
// own files over 1,300 lines together (functions over 200 lines: Biome's
// noExcessiveLinesPerFunction, `npm run lint`). No exceptions.
const FILE_LINES = 500;
const CLASS_LINES = 300;
const FOLDER_LINES = 1300;

const lines = (file: string) => readFileSync(join(SRC, file), "utf8").split("\n").length - 1;

describe("size bounds", () => {
  const files = sourceFiles();

  it(`no file in src/ over ${FILE_LINES} lines`, () => {
    const over = files.filter((f) => lines(f) > FILE_LINES).map((f) => `${f}: ${lines(f)}`);
    expect(over).toEqual([]);
  });

  it(`no class in src/ over ${CLASS_LINES} lines`, () => {
    const over: string[] = [];
    for (const f of files) {
      const text = readFileSync(join(SRC, f), "utf8").split("\n");
      text.forEach((line, i) => {
        const m = /^(?:export )?(?:abstract )?class (\w+)/.exec(line);
        if (!m) return;
        const end = text.findIndex((l, j) => j > i && l === "}");
        const length = end - i + 1;
        if (length > CLASS_LINES) over.push(`${f}: class ${m[1]} ${length}`);
      });
    }
    expect(over).toEqual([]);
  });

  it(`no folder's own files over ${FOLDER_LINES} lines together`, () => {
    const byFolder = new Map<string, number>();
    for (const f of files) byFolder.set(dirname(f), (byFolder.get(dirname(f)) ?? 0) + lines(f));
    const over = [...byFolder].filter(([, n]) => n > FOLDER_LINES).map(([folder, n]) => `${folder}: ${n}`);
    expect(over).toEqual([]);
  });
});
