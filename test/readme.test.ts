import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { accept, simulate } from "mcp-yield/testing";

// The README's code is these files, verbatim, and they work: a newcomer copies code that runs.

const run = promisify(execFile);
const root = fileURLToPath(new URL("..", import.meta.url));
const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
// The guides under docs/ quote snippets too: README.md and those together are what a user reads.
const guides = readdirSync(new URL("../docs/", import.meta.url))
  .filter((f) => f.endsWith(".md"))
  .map((f) => readFileSync(new URL(`../docs/${f}`, import.meta.url), "utf8"));
const snippets = readdirSync(new URL("../examples/readme/", import.meta.url)).filter((f) => f.endsWith(".ts"));
let close = async () => {};
afterAll(() => close());

describe("README snippets", () => {
  it.each(snippets)("README.md or a guide in docs/ quotes examples/readme/%s verbatim", (file) => {
    const code = readFileSync(new URL(`../examples/readme/${file}`, import.meta.url), "utf8").trim();
    expect(
      [readme, ...guides].some((text) => text.includes("```ts\n" + code + "\n```")),
      `${file} is quoted nowhere`,
    ).toBe(true);
  });

  it("README.md stays a user guide: at most 600 lines", () => {
    expect(readme.split("\n").length).toBeLessThanOrEqual(600);
  });

  it.each(["README.md", "ARCHITECTURE.md", "CHANGELOG.md", "bench/README.md", "test/README.md", ...readdirSync(new URL("../docs/", import.meta.url)).map((f) => `docs/${f}`)])(
    "%s links only to files that exist",
    (doc) => {
      const text = readFileSync(new URL(`../${doc}`, import.meta.url), "utf8");
      const base = new URL(`../${doc}`, import.meta.url);
      for (const [, target] of text.matchAll(/\]\(([^)#:]+)(?:#[^)]*)?\)/g)) expect(existsSync(new URL(target!, base)), `${doc} links to ${target}`).toBe(true);
    },
  );

  it("the install lines name every package the snippets import", () => {
    const installed = new Set([...readme.matchAll(/^npm install ([^#\n]+)/gm)].flatMap((m) => m[1]!.trim().split(/\s+/)));
    const imported = new Set(
      snippets.flatMap((file) =>
        [...readFileSync(new URL(`../examples/readme/${file}`, import.meta.url), "utf8").matchAll(/from "([^".][^"]*)"/g)]
          .map((m) => m[1]!)
          .filter((spec) => !spec.startsWith("node:"))
          .map((spec) => (spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0]!)),
      ),
    );
    expect(imported.size).toBeGreaterThan(3);
    expect([...imported].filter((pkg) => !installed.has(pkg))).toEqual([]);
  });

  it("the quickstart tool completes under simulate, as the README shows", async () => {
    const { bookFlight } = await import("../examples/readme/quickstart.js");
    const sim = await simulate(bookFlight, { destination: "Lisbon" }, { confirm: accept({ confirm: true }) });
    expect(sim.result.content[0]!.text).toMatch(/^Booked Lisbon: receipt D-lisbon-/);
  });

  it("the summarize tool reads a reply of one block and of several", async () => {
    const { summarize } = await import("../examples/readme/summarize.js");
    const one = await simulate(summarize, { text: "x" }, { "sample-0": { role: "assistant", content: { type: "text", text: "short" }, model: "m" } });
    const many = await simulate(
      summarize,
      { text: "x" },
      {
        "sample-0": {
          role: "assistant",
          content: [
            { type: "text", text: "two " },
            { type: "text", text: "blocks" },
          ],
          model: "m",
        },
      },
    );
    expect([one.result.content[0]!.text, many.result.content[0]!.text]).toEqual(["short", "two blocks"]);
  });

  it("the resource template snippet reads a note after asking", async () => {
    const { note } = await import("../examples/readme/note-template.js");
    const sim = await simulate(note, { uri: "notes://work/plans/q3.md" }, { show: accept({ show: true }) });
    expect(sim.result.contents).toEqual([{ uri: "notes://work/plans/q3.md", mimeType: "text/markdown", text: "# plans/q3.md in work" }]);
  });

  it("the patched snippet asks new calls twice", async () => {
    const { book } = await import("../examples/readme/patched.js");
    const sim = await simulate(book, { destination: "Oslo" }, { again: accept({ confirm: true }), confirm: accept({ confirm: true }) });
    expect(sim.result.content[0]!.text).toBe("Booked Oslo.");
    expect(sim.rounds.map((r) => Object.keys(r.inputRequests))).toEqual([["again"], ["confirm"]]);
  });

  it("the serve snippet serves it, and the official-client snippet calls it", async () => {
    process.env.PORT = "0";
    const { http } = await import("../examples/readme/serve.js");
    await new Promise((r) => (http.listening ? r(undefined) : http.once("listening", r)));
    close = () => new Promise((r) => http.close(() => r()));
    const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
    const { stdout } = await run(process.execPath, ["--conditions=mcp-yield-source", "--import", "tsx", "examples/readme/official-client.ts"], {
      cwd: root,
      env: { ...process.env, MCP_URL: url },
      timeout: 30_000,
    });
    expect(stdout).toContain("The server asks: Book Lisbon for $120?");
    expect(stdout).toMatch(/Booked Lisbon: receipt D-lisbon-/);
  }, 60_000);
});
