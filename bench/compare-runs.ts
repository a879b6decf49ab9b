// bench/compare-runs.ts: this run's targets against the run the repository carries
// (bench/results.json, written by the last `npm run bench -- --readme`). The issue's bar is every
// target met twice in a row; one run says little on these machines, where a ratio near its line
// came out on either side of it from one day to the next (stateless a/b at R = 30: 1.65, then
// 1.568; sealed/GCM at 10 records: 1.155, then 1.427). So each run says, target by target, what
// the carried run read, whether both met it, and which figures moved by more than a tenth.
import { z } from "zod";

/** A target as run.ts makes it (and bench/results.json keeps it). */
export interface RunTarget {
  name: string;
  value: number;
  target: string;
  met: boolean;
}

/** The part of a carried bench/results.json compared here; anything else in the file is ignored. */
const carriedRun = z.object({
  machine: z.object({ date: z.string(), commit: z.string().optional() }),
  seconds: z.number(),
  targets: z.array(z.object({ name: z.string(), value: z.number(), target: z.string(), met: z.boolean() })),
});

/** One target in both runs. `change`: this run's value over the carried one's, less 1 (undefined when the carried value is 0). */
export interface ComparedTarget {
  name: string;
  before: number;
  now: number;
  change: number | undefined;
  metBefore: boolean;
  metNow: boolean;
}

export interface RunComparison {
  carried: { date: string; commit: string | undefined; seconds: number };
  /** Whether the carried run measured this same code (`undefined`: not known, e.g. no commit recorded). */
  sameCode: boolean | undefined;
  compared: ComparedTarget[];
  /** Targets of this run the carried one did not have, or had with another bound (not compared). */
  notCompared: string[];
  /** Every target of this run met, here and in the carried run, with the same bound. */
  everyTargetMetTwice: boolean;
}

/** A change larger than this (either way) is named as a moved figure. */
export const MOVED = 0.1;

/**
 * This run's targets against the carried run (the parsed JSON of bench/results.json), or why they
 * cannot be compared (no carried run, or one this version does not read).
 */
export function compareRuns(carried: unknown, current: readonly RunTarget[], sameCodeAs: (commit: string) => boolean | undefined = () => undefined): RunComparison | { unreadable: string } {
  const parsed = carriedRun.safeParse(carried);
  if (!parsed.success) return { unreadable: `bench/results.json is not a bench run this version reads (${parsed.error.issues[0]?.message ?? "invalid"})` };
  const before = new Map(parsed.data.targets.map((t) => [t.name, t]));
  const compared: ComparedTarget[] = [];
  const notCompared: string[] = [];
  for (const t of current) {
    const old = before.get(t.name);
    // A target whose bound changed is another target: comparing "met" across the two would mislead.
    if (old === undefined || old.target !== t.target) {
      notCompared.push(t.name);
      continue;
    }
    compared.push({ name: t.name, before: old.value, now: t.value, change: old.value === 0 ? undefined : t.value / old.value - 1, metBefore: old.met, metNow: t.met });
  }
  return {
    carried: { date: parsed.data.machine.date, commit: parsed.data.machine.commit, seconds: parsed.data.seconds },
    // A run of a tree with uncommitted changes measured code no commit holds.
    sameCode: parsed.data.machine.commit === undefined || parsed.data.machine.commit.endsWith("+changes") ? undefined : sameCodeAs(parsed.data.machine.commit),
    compared,
    notCompared,
    everyTargetMetTwice: current.length > 0 && notCompared.length === 0 && compared.every((c) => c.metBefore && c.metNow),
  };
}

const percent = (change: number) => `${change > 0 ? "+" : ""}${(change * 100).toFixed(0)} %`;

/** The comparison as the lines the bench prints (and puts in the README block). */
export function comparisonLines(comparison: RunComparison | { unreadable: string }): string[] {
  if ("unreadable" in comparison) return [`Against the carried run: not compared — ${comparison.unreadable}.`];
  const { carried, compared, notCompared, sameCode } = comparison;
  const code = sameCode === true ? "the same code" : sameCode === false ? "other code" : "code not known to be the same";
  const metBoth = compared.filter((c) => c.metBefore && c.metNow).length;
  const moved = compared.filter((c) => c.change !== undefined && Math.abs(c.change) > MOVED);
  const flipped = compared.filter((c) => c.metBefore !== c.metNow);
  const lines = [
    `Against the run carried before this one (bench/results.json: ${carried.date}${carried.commit ? `, ${carried.commit.slice(0, 7)}` : ""}, ${carried.seconds} s; ${code}): ${metBoth} of ${compared.length + notCompared.length} targets met in both runs — ${comparison.everyTargetMetTwice ? "**every target met twice in a row**" : "not every target met twice in a row"}.`,
  ];
  if (flipped.length > 0) lines.push(`Met in one run only: ${flipped.map((c) => `${c.name} (${c.before} then ${c.now}, ${c.metNow ? "met now" : "missed now"})`).join("; ")}.`);
  if (moved.length > 0) lines.push(`Moved by more than ${MOVED * 100} %: ${moved.map((c) => `${c.name} ${c.before} → ${c.now} (${percent(c.change!)})`).join("; ")}.`);
  if (notCompared.length > 0) lines.push(`Not in the carried run with the same bound: ${notCompared.join("; ")}.`);
  return lines;
}
