import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Definition, ToolDefinition } from "../authoring/definitions.js";
import { fixtureRecords, type JournalFixture, journalFixture } from "../journal/fixture.js";
import { describeAskChange, describeFingerprint } from "../journal/journal.js";
import { withAmbient } from "../replay/ambient.js";
import { CallContext } from "../replay/call-context.js";
import { AuthorCodeError, DivergenceError } from "../replay/errors.js";
import { Round, type RoundOutcome } from "../replay/round/round.js";
import { canonicalJson, decodeValue } from "../state/index.js";

// Saved journals replayed against the code as it is now: the capture → fixture → CI recipe
// (Temporal's replay tests). A change that would break calls in flight — an ask reworded, a step
// renamed or moved, a branch added without `patched()` — turns its fixture red, naming what changed.

/** One fixture's verdict. */
export interface FixtureVerdict {
  /** The fixture's file (or its position in a list). */
  fixture: string;
  tool: string;
  ok: boolean;
  /** Why it failed, in words: the effect and what changed about it. */
  problem?: string;
  /** The journal position where the code departs from it, when there is one. */
  index?: number;
}

/** What `replayFixtures` found: every verdict, and the failures for an `expect(...).toEqual([])`. */
export interface FixtureReport {
  verdicts: FixtureVerdict[];
  /** `"<fixture> (<tool>): <problem>"` for each failed fixture. */
  failures: string[];
}

/** A step reached past the end of the journal: the replay stops there (nothing past it runs). */
class PastJournal extends Error {}

const NEVER = new AbortController().signal;
const refuse = () => {
  throw new Error("a fixture replay never reads the clock or draws an id past the journal");
};

function load(source: string | readonly (JournalFixture | { file: string; fixture: unknown })[]): Array<{ name: string; fixture: unknown }> {
  if (typeof source !== "string") return source.map((f, i) => ("file" in f && "fixture" in f ? { name: f.file, fixture: f.fixture } : { name: `fixture #${i}`, fixture: f }));
  if (!statSync(source).isDirectory()) throw new TypeError(`replayFixtures: ${source} is not a folder of fixtures`);
  return readdirSync(source)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((file) => {
      const path = join(source, file);
      try {
        return { name: path, fixture: JSON.parse(readFileSync(path, "utf8")) as unknown };
      } catch (error) {
        return { name: path, fixture: { unreadable: (error as Error).message } };
      }
    });
}

/** Replay one fixture against `def`: `undefined` when the code still agrees with it, else why not. */
/** The wake clock a fixture replays on: later than any recorded wake time (ms since the epoch). */
const REPLAYED_CLOCK = Number.MAX_SAFE_INTEGER / 2;

async function replayOne(def: ToolDefinition, f: JournalFixture): Promise<{ problem: string; index?: number } | undefined> {
  if (f.version !== def.version) {
    return {
      problem: `recorded under definition version ${JSON.stringify(f.version ?? null)}, the code is version ${JSON.stringify(def.version ?? null)}: a running server refuses such a state (start the call again), so this fixture no longer applies — re-export it or delete it`,
    };
  }
  let input: unknown;
  if (f.input !== undefined) input = decodeValue(f.input);
  else {
    const parsed = def.input.safeParse(f.arguments ?? {});
    if (!parsed.success)
      return { problem: `the tool's input schema now refuses the recorded arguments: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")}` };
    input = parsed.data;
  }
  const context = new CallContext(undefined, f.callId);
  const outstanding = f.end.at === "ask" ? f.end.outstanding : undefined;
  const round = new Round({
    start: () => def.run(input as never, context),
    journal: fixtureRecords(f),
    outstanding,
    partial: f.end.at === "ask" ? (f.end.partial ?? {}) : {},
    responses: new Map(),
    declared: () => true,
    signal: () => NEVER,
    randomUUID: refuse,
    clock: refuse,
    task: f.source === "task" ? "inside" : "foreground",
    beforeStep: () => {
      throw new PastJournal();
    },
    // Every sleep and retry delay the journal records has ended (the call went on past it): the
    // clock reads later than any real wake time. A new `sleep(ms)` past the journal still sleeps.
    wakeClock: () => REPLAYED_CLOCK,
    signalFor: () => undefined,
    signalToken: (name) => `fixture-signal-token-${name}`,
    signalUrl: (token) => `https://fixture.invalid/signals/${token}`,
  });
  let outcome: RoundOutcome | "step";
  context.enter(round);
  try {
    outcome = await withAmbient("replay", [], () => round.run());
  } catch (error) {
    if (error instanceof PastJournal) outcome = "step";
    else if (error instanceof DivergenceError) return { problem: error.what, index: error.index };
    else if (error instanceof AuthorCodeError) return { problem: `replayed, the code throws: ${error.message}` };
    else return { problem: `replayed, the code throws: ${(error as Error)?.message ?? String(error)}` };
  } finally {
    context.leave();
  }
  const at = f.records.length;
  if (f.end.at === "running") return undefined; // the journal replayed; what follows was not recorded yet
  if (f.end.at === "complete") {
    if (outcome === "step") return { problem: `the call completed after effect #${at - 1}; the code now runs a step there`, index: at };
    if (outcome.type !== "complete")
      return {
        problem: `the call completed after effect #${at - 1}; the code now ${outcome.type === "input_required" ? `asks ${Object.keys(outcome.inputRequests).join(", ")}` : `ends ${outcome.type}`} there`,
        index: at,
      };
    return undefined;
  }
  // Waiting for asks: the code must make the same asks there.
  const recorded = f.end.outstanding;
  const wanted = Object.entries(recorded)
    .map(([key, fp]) => `${describeFingerprint(fp)} under key "${key}"`)
    .join(", ");
  if (outcome === "step") return { problem: `at effect #${at} the call waited for ${wanted}; the code now runs a step there`, index: at };
  if (outcome.type !== "input_required")
    return { problem: `at effect #${at} the call waited for ${wanted}; the code now ${outcome.type === "complete" ? "completes" : `ends ${outcome.type}`} there`, index: at };
  if (canonicalJson(outcome.outstanding) === canonicalJson(recorded)) return undefined;
  const pending = outcome.suspended.pending;
  for (const [key, fp] of Object.entries(recorded)) {
    const now = outcome.outstanding[key];
    if (now === fp) continue;
    const change = now !== undefined && pending !== undefined ? describeAskChange(fp, now, pending.effect, pending.key ?? key) : undefined;
    if (change) return { problem: `at effect #${at}, ${change.words}`, index: at };
  }
  return {
    problem: `at effect #${at} the call waited for ${wanted}; the code now asks ${Object.entries(outcome.outstanding)
      .map(([key, fp]) => `${describeFingerprint(fp)} under key "${key}"`)
      .join(", ")}`,
    index: at,
  };
}

/**
 * Replay saved journals (`npx mcp-yield export` writes them) against `definitions` as they are
 * now, as a server would replay a call in flight after a deploy: every fixture whose call the new
 * code would break fails, naming the effect and what changed (an ask's message, a step's name,
 * a branch without `patched()`). A `patched()` keeps old journals on their old branch, so a
 * patched change passes. Nothing runs past a journal: no step, no clock.
 *
 * `source` is a folder of `*.json` fixtures or a list of fixtures. Use it in a test:
 * `expect((await replayFixtures(definitions, "test/fixtures/journals")).failures).toEqual([])`.
 */
export async function replayFixtures(definitions: readonly Definition[], source: string | readonly (JournalFixture | { file: string; fixture: unknown })[]): Promise<FixtureReport> {
  const tools = new Map(definitions.filter((d): d is ToolDefinition => d.type === "tool").map((d) => [d.name, d]));
  const verdicts: FixtureVerdict[] = [];
  for (const { name, fixture } of load(source)) {
    const parsed = journalFixture.safeParse(fixture);
    if (!parsed.success) {
      verdicts.push({ fixture: name, tool: "?", ok: false, problem: `not a journal fixture: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")}` });
      continue;
    }
    const f = parsed.data;
    const def = tools.get(f.tool);
    const failed = def === undefined ? { problem: `no tool named ${JSON.stringify(f.tool)} among the definitions given (renamed or removed: calls in flight would fail)` } : await replayOne(def, f);
    verdicts.push(failed === undefined ? { fixture: name, tool: f.tool, ok: true } : { fixture: name, tool: f.tool, ok: false, ...failed });
  }
  return { verdicts, failures: verdicts.filter((v) => !v.ok).map((v) => `${v.fixture} (${v.tool}): ${v.problem}`) };
}
