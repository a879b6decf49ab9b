import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

// `npm run build` must emit runnable ESM with declarations for every entry point.
describe("package build", () => {
  // Inside the project so the emitted code resolves dependencies from node_modules as dist/ would.
  const out = mkdtempSync(join(process.cwd(), "node_modules", ".build-test-"));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it("emits JavaScript and .d.ts for each export", async () => {
    execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json", "--outDir", out], { stdio: "pipe" });
    const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { exports: Record<string, { types: string; default: string }> };
    for (const [entry, target] of Object.entries(pkg.exports)) {
      const js = join(out, target.default.replace("./dist/", ""));
      expect(existsSync(js), `${entry} js`).toBe(true);
      expect(existsSync(join(out, target.types.replace("./dist/", ""))), `${entry} types`).toBe(true);
    }
    const main = (await import(pathToFileURL(join(out, "index.js")).href)) as typeof import("mcp-yield");
    const codec = main.createStateCodec({ keys: [{ id: "k", secret: new Uint8Array(32).fill(9) }] });
    const binding = { method: "tools/call", target: "t" } as const;
    expect(codec.open(codec.seal({ binding, data: { ok: true } }), binding).data).toEqual({ ok: true });
  }, 120_000);
});
