import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

/**
 * The failed tests of one vitest run, read from its JSON report (`--reporter=json`): file, name
 * and the start of each message. CI prints them last, where its log is read: a failure's own
 * report is otherwise scrolled away by whatever ran after it.
 */
export function failedTests(report: string, label: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(report, "utf8"));
  } catch (e) {
    return [`  ${label}: no test report (${(e as Error).message}): vitest itself failed; its output is above`];
  }
  type Assertion = { status?: string; fullName?: string; failureMessages?: string[] };
  type File = { name?: string; status?: string; message?: string; assertionResults?: Assertion[] };
  const files = (parsed as { testResults?: File[] }).testResults ?? [];
  const lines: string[] = [];
  for (const file of files) {
    const name = (file.name ?? "?").replace(`${process.cwd()}/`, "");
    const tests = (file.assertionResults ?? []).filter((t) => t.status === "failed");
    for (const t of tests) lines.push(`  ${label} ${name} > ${t.fullName ?? "?"}\n    ${(t.failureMessages ?? []).join("\n").split("\n").slice(0, 12).join("\n    ")}`);
    if (tests.length === 0 && file.status === "failed") lines.push(`  ${label} ${name}: ${file.message ?? "failed outside any test"}`);
  }
  return lines.length > 0 ? lines : [`  ${label}: no failed test in the report (exit code only); its output is above`];
}

// `tsx scripts/test-report.ts <report.json> <label>`: print that run's failures (.ci/run).
if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const [report, label = "vitest"] = process.argv.slice(2);
  if (report === undefined) {
    console.error("usage: tsx scripts/test-report.ts <report.json> [label]");
    process.exit(2);
  }
  console.error(`\n[${label}] what failed:\n${failedTests(report, label).join("\n")}`);
}
