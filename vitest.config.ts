import { defineConfig } from "vitest/config";
import LongestFirst from "./test/support/longest-first.js";

// Three projects, one folder glob each (test/README.md says which test goes where):
// - fast: test/<layer>/ (one folder per src/ layer), test/architecture/ and the few files at
//   test/'s root — in-process, or against the Redis and PostgreSQL the machine runs;
// - faults: test/faults/ — every store operation failed in turn, every way (minutes of waiting), a
//   project of its own so the fast tests can run alone (on Node 22 and 24 in CI: `npm run test:node`);
// - system: test/system/ — real processes, real installs, the public conformance suite, heap
//   measurements. After the others, so on a busy 2-core machine they do not compete with the
//   fast tests and fault suites for the CPU their time limits assume; two files at a time, as
//   the others run (they wait on processes and servers for about half of their time; the two
//   that build dist/ take turns: test/support/dist-lock.ts).
// `npm test` runs all three.
const SYSTEM = ["test/system/**/*.test.ts"];
const FAULTS = ["test/faults/**/*.test.ts"];
// MCP_YIELD_TEST_REPORT=<file>: a JSON report beside the usual output (.ci/run prints its
// failures last, where a CI log is read).
const report = process.env.MCP_YIELD_TEST_REPORT;

// Tests import the package by name ("mcp-yield", "mcp-yield/server", ...) as users do; the
// "source" export condition points those names at src/ so no build is needed first.
export default defineConfig({
  resolve: { conditions: ["mcp-yield-source"] },
  ssr: { resolve: { conditions: ["mcp-yield-source"] } },
  test: {
    testTimeout: 30_000,
    // Vitest's default on 2 cores is one worker: the fast files then run one after another, most
    // of them waiting (leases, sleeps, real servers) rather than computing. Two overlap the waits
    // (three starved the fault suites of CPU on a machine losing a fifth of it to steal).
    maxWorkers: 2,
    // The longest files first (test/support/longest-first.ts), so both workers end together.
    sequence: { sequencer: LongestFirst },
    ...(report ? { reporters: ["default", "json"], outputFile: { json: report } } : {}),
    projects: [
      // The fast files share their worker's modules (isolate: false): each file loading the
      // library afresh was half of their CPU time (125 s against 67 s for the 97 files, the same
      // tests passing). No test mocks a module or stubs a global; each makes its own runtime.
      { extends: true, test: { name: "fast", include: ["test/**/*.test.ts"], exclude: [...SYSTEM, ...FAULTS], isolate: false, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: "faults", include: FAULTS, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: "system", include: SYSTEM, sequence: { groupOrder: 1 } } },
    ],
  },
});
