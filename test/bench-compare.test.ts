import { describe, expect, it } from "vitest";
import { compareRuns, comparisonLines, type RunTarget } from "../bench/compare-runs.js";

// The bench's verdict on "every target met twice in a row": this run against the one
// bench/results.json carries.

const target = (name: string, value: number, bound: string, met: boolean): RunTarget => ({ name, value, target: bound, met });
const carriedWith = (targets: RunTarget[], commit?: string) => ({ machine: { date: "2026-12-03", ...(commit ? { commit } : {}) }, seconds: 1039, targets, replay: [] });

describe("bench: this run against the carried one", () => {
  const now = [target("live a/b", 0.7, "≤ 1", true), target("memory / none", 1.45, "≤ 1.5", true)];

  it("says every target was met twice in a row only when both runs met every one, with the same bounds", () => {
    const both = compareRuns(carriedWith([target("live a/b", 0.68, "≤ 1", true), target("memory / none", 1.49, "≤ 1.5", true)]), now);
    expect(both).toMatchObject({ everyTargetMetTwice: true, notCompared: [] });
    expect(comparisonLines(both)[0]).toContain("2 of 2 targets met in both runs — **every target met twice in a row**");

    const missedBefore = compareRuns(carriedWith([target("live a/b", 0.68, "≤ 1", true), target("memory / none", 1.59, "≤ 1.5", false)]), now);
    expect(missedBefore).toMatchObject({ everyTargetMetTwice: false });
    const lines = comparisonLines(missedBefore).join("\n");
    expect(lines).toContain("1 of 2 targets met in both runs — not every target met twice in a row");
    expect(lines).toContain("Met in one run only: memory / none (1.59 then 1.45, met now)");
  });

  it("does not count a target whose bound changed, nor one the carried run lacks, as met twice", () => {
    const r = compareRuns(carriedWith([target("live a/b", 0.68, "≤ 1.1", true)]), now);
    expect(r).toMatchObject({ everyTargetMetTwice: false, notCompared: ["live a/b", "memory / none"], compared: [] });
    expect(comparisonLines(r).join("\n")).toContain("Not in the carried run with the same bound: live a/b; memory / none");
  });

  it("names the figures that moved by more than a tenth, either way, and only those", () => {
    const r = compareRuns(carriedWith([target("live a/b", 0.9, "≤ 1", true), target("memory / none", 1.4, "≤ 1.5", true)]), now);
    const lines = comparisonLines(r).join("\n");
    expect(lines).toContain("Moved by more than 10 %: live a/b 0.9 → 0.7 (-22 %)");
    expect(lines).not.toContain("memory / none 1.4"); // +3.6 %
  });

  it("says whether the carried run measured the same code, asking git only for a commit measured as it was", () => {
    const asked: string[] = [];
    const same = (commit: string) => (asked.push(commit), commit === "abc1234def");
    const t = [target("live a/b", 0.68, "≤ 1", true), target("memory / none", 1.49, "≤ 1.5", true)];
    expect(compareRuns(carriedWith(t, "abc1234def"), now, same)).toMatchObject({ sameCode: true });
    expect(comparisonLines(compareRuns(carriedWith(t, "abc1234def"), now, same))[0]).toContain("(bench/results.json: 2026-12-03, abc1234, 1039 s; the same code)");
    expect(compareRuns(carriedWith(t, "0000000fff"), now, same)).toMatchObject({ sameCode: false });
    expect(compareRuns(carriedWith(t, "abc1234def+changes"), now, same)).toMatchObject({ sameCode: undefined });
    expect(compareRuns(carriedWith(t), now, same)).toMatchObject({ sameCode: undefined });
    expect(asked).toEqual(["abc1234def", "abc1234def", "0000000fff"]);
  });

  it("reports a carried file it cannot read instead of failing the run", () => {
    for (const carried of [{ error: "ENOENT: no such file" }, null, { machine: { date: 3 }, seconds: 1, targets: [] }, { machine: { date: "d" }, seconds: 1, targets: [{ name: "x", value: "1" }] }]) {
      const r = compareRuns(carried, now);
      expect(r).toHaveProperty("unreadable");
      expect(comparisonLines(r)).toEqual([expect.stringMatching(/^Against the carried run: not compared — bench\/results\.json is not a bench run this version reads \(.+\)\.$/)]);
    }
  });

  it("reads the run the repository carries now", async () => {
    const { readFileSync } = await import("node:fs");
    const carried: unknown = JSON.parse(readFileSync(new URL("../bench/results.json", import.meta.url), "utf8"));
    const r = compareRuns(carried, now);
    expect(r).not.toHaveProperty("unreadable");
  });
});
