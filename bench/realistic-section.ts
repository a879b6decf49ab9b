import { cost, ratio, repeated } from "./harness.js";

/**
 * The realistic tool (bench/realistic-tools.ts) through the runtime against the same tool written
 * by hand, with 1 or 300 distinct calls in flight: server CPU per request (µs) and the ratios the
 * targets name. One operation is one request of the next call in turn, so 300 calls are always
 * part-way through — what an instance serving many users holds, where the bench's count tool
 * (one call, default keys) lets the runtime's per-call caches hit every time.
 */
export interface RealisticRow {
  lines: number;
  inFlight: number;
  us: { live: number; stateless: number; handWritten: number };
  liveVsHandWritten: number;
  statelessVsHandWritten: number;
}

export const REALISTIC_SETS = [
  { lines: 10, inFlight: 1 },
  { lines: 10, inFlight: 300 },
  { lines: 30, inFlight: 300 },
];

export async function realisticSection(runs: number, sets = REALISTIC_SETS): Promise<RealisticRow[]> {
  const rows: RealisticRow[] = [];
  for (const { lines, inFlight } of sets) {
    const r = await repeated(
      runs,
      [
        { name: "ra-live", factory: "realistic", args: [lines, null, inFlight] },
        { name: "ra-stateless", factory: "realistic", args: [lines, 0, inFlight] },
        { name: "rb", factory: "realisticHandWritten", args: [lines, inFlight] },
      ],
      (s) => ({
        live: cost(s, "ra-live"),
        stateless: cost(s, "ra-stateless"),
        b: cost(s, "rb"),
        liveB: ratio(s, "ra-live", "rb"),
        statelessB: ratio(s, "ra-stateless", "rb"),
      }),
    );
    rows.push({ lines, inFlight, us: { live: r.live / 1e3, stateless: r.stateless / 1e3, handWritten: r.b / 1e3 }, liveVsHandWritten: r.liveB, statelessVsHandWritten: r.statelessB });
  }
  return rows;
}
