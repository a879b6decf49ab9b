import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { buildDocs } from "../../scripts/docs.js";

// `npm run docs`: the API reference from the doc comments; an undocumented export fails CI here.
const root = fileURLToPath(new URL("../..", import.meta.url));
beforeAll(async () => {
  await promisify(execFile)(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"], { cwd: root });
}, 120_000);

describe("API reference", () => {
  it("every public export is documented, and the reference is generated", () => {
    const { undocumented, errors } = buildDocs(() => {});
    expect(undocumented).toEqual([]);
    expect(errors).toEqual([]);
    const index = readFileSync(`${root}dist/docs/api/mcp-yield.md`, "utf8");
    for (const name of ["createRuntime", "tool", "elicit", "runAsTask", "server", "client", "testing", "redis"]) expect(index).toContain(name);
    expect(existsSync(`${root}dist/docs/api/mcp-yield.server.register.md`)).toBe(true);
  }, 120_000);

  it("an export without a doc comment is caught", () => {
    const { undocumented } = buildDocs(() => {}, "export declare const undocumentedProbe: number;\n");
    expect(undocumented.join("\n")).toContain('"undocumentedProbe"');
  }, 120_000);
});
