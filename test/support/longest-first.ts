import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The order test files start in: the longest first, so the two workers finish together.
 * Vitest's own order (no timing cache on a fresh CI checkout) runs the fast project's files
 * before any of the faults project's, by file size: the fault suites — the longest files by far,
 * and among the smallest — started last and ran alone for minutes at the end.
 *
 * The files below took 10 s or more each (the CI log, 2026-12-07), longest first in each group;
 * every other file follows in Vitest's order. A file missing here only starts later than it could.
 */
const LONGEST = [
  "test/faults/faults-deployed.test.ts",
  "test/faults/faults-redis.test.ts",
  "test/faults/edges-deployed.test.ts",
  "test/faults/edges-redis.test.ts",
  "test/faults/faults-postgres.test.ts",
  "test/store/store-contract.test.ts",
  "test/faults/faults-memory.test.ts",
  "test/faults/edges-postgres.test.ts",
  "test/tasks/task-lifetime.test.ts",
  "test/tasks/wake-elsewhere.test.ts",
  "test/server/tasks-http.test.ts",
  "test/tasks/tasks-shared-store.test.ts",
  "test/store/memory-degrade.test.ts",
  "test/tasks/race.test.ts",
  "test/faults/edges-memory.test.ts",
  // The system files (a group of their own, after the others).
  "test/system/task-status.test.ts",
  "test/system/tasks-cluster.test.ts",
  "test/system/package.test.ts",
  "test/system/live-volume.test.ts",
  "test/system/approve-later.test.ts",
  "test/system/memory.test.ts",
  "test/system/conformance.test.ts",
  "test/system/cluster.test.ts",
];

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const base = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const i = LONGEST.indexOf(relative(spec.project.config.root, spec.moduleId));
      return i === -1 ? LONGEST.length : i;
    };
    // Groups (sequence.groupOrder) keep their order; within one, the known long files lead.
    const group = (spec: TestSpecification) => spec.project.config.sequence.groupOrder;
    return base
      .map((spec, at) => ({ spec, at }))
      .sort((a, b) => group(a.spec) - group(b.spec) || rank(a.spec) - rank(b.spec) || a.at - b.at)
      .map(({ spec }) => spec);
  }
}
