import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildDocs } from "../../scripts/docs.js";
import { htmlTablesToMarkdown } from "../../scripts/markdown-tables.js";
import { holdDist } from "../support/dist-lock.js";

// `npm run docs`: the API reference from the doc comments; an undocumented export fails CI here.
const root = fileURLToPath(new URL("../..", import.meta.url));
// dist/ is this file's until it ends (the package test builds into it too).
let dist: Awaited<ReturnType<typeof holdDist>> | undefined;
afterAll(() => dist?.release());
beforeAll(async () => {
  dist = await holdDist();
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
    // Plain Markdown (issue 56 point 8): pipe tables, no HTML tables, no api-documenter separators.
    for (const file of readdirSync(`${root}dist/docs/api`)) expect(readFileSync(`${root}dist/docs/api/${file}`, "utf8")).not.toMatch(/<\/?(table|thead|tbody|tr|td|th)>|<!-- -->/);
    expect(index).toMatch(
      /^\| Class \| Description \|\n\| --- \| --- \|\n\| \[DivergenceError\]\(\.\/mcp-yield\.divergenceerror\.md\) \| The code or its inputs changed between rounds: .* the client should start the call again without requestState\. \|$/m,
    );
  }, 120_000);

  it("HTML tables become pipe tables: a cell's paragraphs on one line, its bars escaped", () => {
    const html =
      "Intro\n\n<table><thead><tr><th>\n\nName\n\n\n</th><th>\n\nType\n\n\n</th></tr></thead>\n<tbody><tr><td>\n\n[a](./a.md)\n\n\n</td><td>\n\n`string | undefined`<!-- -->\n\nsecond\nline\n\n\n</td></tr>\n</tbody></table>\n\nAfter";
    expect(htmlTablesToMarkdown(html)).toBe("Intro\n\n| Name | Type |\n| --- | --- |\n| [a](./a.md) | `string \\| undefined` second line |\n\nAfter");
  });

  it("an export without a doc comment is caught", () => {
    const { undocumented } = buildDocs(() => {}, "export declare const undocumentedProbe: number;\n");
    expect(undocumented.join("\n")).toContain('"undocumentedProbe"');
  }, 120_000);
});
