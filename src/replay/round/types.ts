import type { RunGenerator } from "../../authoring/definitions.js";
import type { Effect } from "../../authoring/effects.js";
import type { JournalRecord } from "../../journal/journal.js";
import type { Capability, InputRequest } from "../../wire/index.js";

// What a round takes and gives back (replay/round/round.ts runs it): the round's vocabulary, kept
// apart so the engine's file is the engine.

/** A step a round ran: its name, when it started (ms since the epoch), how long it took, whether it returned. */
export interface StepRun {
  name: string;
  startedAt: number;
  ms: number;
  ok: boolean;
}

/** Everything one round needs from the request and the state. */
export interface RoundInput {
  /** Starts the author's generator from the top. */
  start: () => RunGenerator<unknown>;
  /** Records replayed from the state (empty on a first call). */
  journal: readonly JournalRecord[];
  /**
   * Where the previous round stopped, when `journal` runs past it (a continuation: the records
   * an interrupted attempt at this same request made). Default: the journal's end.
   */
  suspendedAt?: number | undefined;
  /** Asks outstanding when the state was minted; `undefined` when the request carried no state. */
  outstanding: Readonly<Record<string, string>> | undefined;
  /** Valid answers already collected for a partly answered `all(...)`: key → value text (as `encodeOutcome` made it). */
  partial: Readonly<Record<string, string>>;
  /** The request's `inputResponses`, own keys only. */
  responses: ReadonlyMap<string, unknown>;
  /** What this request declared: gates asking, and answers `ctx.can` past the journal. */
  declared: (kind: Capability) => boolean;
  /** The request carried no capabilities envelope at all (a `-32021` then says why). */
  undeclared?: boolean;
  /** The call's signal, for steps (made when first asked for). */
  signal: () => AbortSignal;
  randomUUID: () => string;
  clock: () => number;
  /**
   * A verification replay (the development double-run): nothing past the journal may run —
   * no step, no clock — and the only effect allowed past it is the ask with this fingerprint
   * (`undefined`: the call completed there).
   */
  verify?: { pending: string | undefined };
  /**
   * Ids of `patched()` calls the code no longer makes: their markers are passed over. Given, a
   * marker of any other patch the code does not make at that position is newer code's, and the
   * round ends handing the request back (`CodeUnknownError`); not given (a verification replay,
   * a fixture), every such marker is passed over.
   */
  removedPatches?: readonly string[] | undefined;
  /** Collects what the code did at each journal position (to name what changed). */
  trace?: Map<number, Traced> | undefined;
  /**
   * What `runAsTask()` does past the journal: `"foreground"` (default) records that the call
   * stays in the foreground; `"become"` records that it becomes a task and ends the round there
   * (outcome `task`); `"inside"` (the call already is a task) records it and goes on.
   */
  task?: "foreground" | "become" | "inside";
  /**
   * Called whenever the round's records must be saved before it goes on: after each step's
   * result is recorded (unless `deferStepSaves`), and before a step runs if records were made since the last save (a
   * `uuid()`, `now()`, `ctx.can` or `patched()` whose value the step may use). A task persists its
   * journal here, so after a crash the instance taking over replays those values instead of
   * making new ones, and a step that completed never runs again. A throw ends the round.
   */
  onStep?: ((records: readonly JournalRecord[]) => Promise<void>) | undefined;
  /**
   * Save a completed step's record with the round's next save — before its next step, or with
   * the round's response — instead of at once: one store write per step. A foreground round's
   * single use sets this (what follows a step there is the author's code up to the next effect,
   * so the result waits no longer than its own write would take); a task saves at once, since
   * its round may go on for long after a step.
   */
  deferStepSaves?: boolean | undefined;
  /**
   * Called right before a step's body runs (after any save `onStep` made for it): a task checks
   * here that it still holds its lease, so a run that lost it never starts another step. A throw
   * ends the round without running the step.
   */
  beforeStep?: (() => Promise<void>) | undefined;
  /**
   * The clock `sleep()` wake times are set and compared on (a task's: the store's). Without it
   * the call is not a task and `sleep()` is an author error.
   */
  wakeClock?: () => number;
  /** Where `progress(...)` goes (a task's status message); without it progress does nothing. */
  onProgress?: ((message: string, done: number | undefined, total: number | undefined) => Promise<void>) | undefined;
  /**
   * Signals (a task's): what has come for the `ordinal`-th wait on `name` — a value, a timeout,
   * or nothing yet (the round then ends waiting). Without it the call is not a task and
   * `waitForSignal()` is an author error.
   */
  signalFor?: (name: string, ordinal: number) => { value: unknown } | { timeout: true } | undefined;
  /** Told whether the value that came for a wait satisfied its schema (and if not, why), or that its race was won by another branch (`lost`). */
  onSignal?: (name: string, ordinal: number, verdict: { ok: true } | { ok: false; message: string; lost?: boolean }) => void;
  /** The token that opens the `ordinal`-th wait on `name` (`ctx.signalToken`); a task's. */
  signalToken?: (name: string, ordinal: number) => string;
  /** The URL a token is sent to (`ctx.signalUrl`); throws when the server has none configured. */
  signalUrl?: (token: string) => string;
}

/** What the code did at one journal position, for divergence messages. */
export type Traced = { effect: Effect; key: string | undefined } | { can: Capability };

/**
 * A generator stopped at an ask it could not satisfy, with everything needed to go on from
 * there: the next round on this instance can resume it instead of replaying from the top.
 */
export interface Suspended {
  generator: RunGenerator<unknown>;
  /** The journal up to (not including) the pending effect — what the sealed state holds. */
  records: JournalRecord[];
  /**
   * The effect to take up again (an ask, an `all`, a race); absent when the generator goes on
   * with `send`. A race's `begun` is the value its begin record holds (already in `records`).
   */
  pending?: { effect: Effect; key: string | undefined; fp: string; begun?: string | undefined } | undefined;
  /** What the generator receives next when there is no pending effect. */
  send?: unknown;
  /** Asks the call made before the pending one (numbers the default keys). */
  asks: number;
}

/** A wait of a race: the signal's name and which wait on it this is. */
export interface RaceWait {
  name: string;
  ordinal: number;
}

/** What a race that has no winner yet waits for, besides its asks. */
export interface RaceWaiting {
  /** The signals it waits for. */
  signals: RaceWait[];
  /** When its first timer ends (wake clock), if it has one. */
  until: number | undefined;
  /** Values that came for its waits and that their schemas refused (they are dropped, the tokens usable again). */
  refusals: Array<RaceWait & { message: string }>;
}

export type RoundOutcome =
  | { type: "complete"; value: unknown; journal: JournalRecord[] }
  /** The task sleeps until `until` (on the wake clock): recorded last in `journal`; no generator is kept. */
  | { type: "sleep"; until: number; journal: JournalRecord[] }
  /** The task waits for the `ordinal`-th signal on `name` (`refusal`: a value came that its schema refused, and why). */
  | { type: "wait"; name: string; ordinal: number; timeoutMs: number | undefined; journal: JournalRecord[]; refusal: string | undefined }
  /** A race with no ask and no winner yet: the task waits for its signals and its first timer (its begin recorded last in `journal`). */
  | ({ type: "race"; journal: JournalRecord[] } & RaceWaiting)
  /** The call became a task at `runAsTask()` (recorded last in `journal`). */
  | { type: "task"; journal: JournalRecord[]; message: string | undefined; suspended: Suspended }
  | {
      type: "input_required";
      inputRequests: Record<string, InputRequest>;
      journal: JournalRecord[];
      outstanding: Record<string, string>;
      partial: Record<string, string> | undefined;
      /**
       * Why this request's answer to an ask (a form elicitation) was refused, by key: the ask is
       * the same, and `inputRequests` is what the code asks; what goes to the client says why
       * (`withRefusals`). Not compared when a round is replayed to check it is deterministic.
       */
      refused: Record<string, string> | undefined;
      suspended: Suspended;
      /** The asks are branches of a race: any one answer (or one of these) ends it. */
      race?: RaceWaiting | undefined;
    };

/**
 * What the effects of several records (`race`, `all` over steps: race.ts, parallel.ts) need of
 * the round that runs them (round.ts's `Round`), named here so they need not import it.
 */
export interface RoundCore {
  readonly input: RoundInput;
  readonly records: JournalRecord[];
  readonly stepsRun: StepRun[];
  /** The position in the journal. */
  index: number;
  readonly asks: number;
  inStep: number;
  consumed: Set<string> | undefined;
  refused: Map<string, string> | undefined;
  /** Values a race's signal branches refused this round. */
  raceRefusals: Array<RaceWait & { message: string }> | undefined;
  /** Before a step body runs: the records so far saved, the host's check made. */
  beforeStep(): Promise<void>;
  /** A step's result was recorded: saved now, unless saves wait for the round's next one. */
  stepRecorded(): Promise<void>;
}
