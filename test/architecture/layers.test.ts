import { describe, expect, it } from "vitest";
import { findCircle, importsOf, sourceFiles } from "./imports.js";

// The layers of src/, lowest first (DESIGN.md "Layers"): a file may import from its own layer
// and from layers below it, never from one above. `server/` and `testing/` are both hosts on
// top of the runtime and do not import each other; `client/` stands apart and needs only the
// wire; `cli/` (the `mcp-yield` command's parts) sits on top. Files directly in src/ are the package's entry points and may import anything.
const ORDER = ["util", "wire", "state", "store", "authoring", "journal", "replay", "tasks", "runtime", "server", "testing", "dashboard", "cli"] as const;
const RANK: Record<string, number> = { ...Object.fromEntries(ORDER.map((layer, i) => [layer, i])), testing: ORDER.indexOf("server") };
const CLIENT_MAY_USE = new Set(["util", "wire", "client"]);

const layerOf = (file: string): string | undefined => (file.includes("/") ? file.slice(0, file.indexOf("/")) : undefined);

describe("the layer rule", () => {
  const files = sourceFiles();
  const graph = new Map(files.map((f) => [f, importsOf(f)]));

  it("every folder under src/ is a known layer", () => {
    const unknown = files.map(layerOf).filter((l): l is string => l !== undefined && l !== "client" && !(l in RANK));
    expect([...new Set(unknown)]).toEqual([]);
  });

  it("no file imports from a higher layer (client/ only from the wire)", () => {
    const breaches: string[] = [];
    for (const [file, targets] of graph) {
      const from = layerOf(file);
      if (from === undefined) continue;
      for (const target of targets) {
        const to = layerOf(target);
        if (to === undefined) breaches.push(`${file} imports the entry point ${target}`);
        else if (from === "client" || to === "client") {
          if (from !== to && !(from === "client" && CLIENT_MAY_USE.has(to))) breaches.push(`${file} → ${target}`);
        } else if (RANK[to]! > RANK[from]! || (RANK[to] === RANK[from] && to !== from)) breaches.push(`${file} (${from}) → ${target} (${to})`);
      }
    }
    expect(breaches).toEqual([]);
  });

  it("no import circle anywhere in src/", () => {
    expect(findCircle(graph)).toBeUndefined();
  });

  it("the checker sees a circle and a breach when there is one", () => {
    expect(
      findCircle(
        new Map([
          ["a", ["b"]],
          ["b", ["c"]],
          ["c", ["a"]],
        ]),
      ),
    ).toEqual(["a", "b", "c", "a"]);
    expect(importsOf("runtime/runtime.ts").some((t) => t.startsWith("replay/"))).toBe(true);
  });
});
