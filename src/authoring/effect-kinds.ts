import type { Capability } from "../wire/index.js";

/**
 * Every kind of effect a `run` generator may yield, and what the rest of the library needs to
 * know about each: one table. `effects.ts` holds the `Effect` union to it (a kind added to the
 * union without a row here, or a row no effect has, fails to type-check), and the journal,
 * the replay engine and the inspector read their letters, capabilities and names from it.
 */

/** What is known about one kind of ask. */
export interface AskKind {
  /** The fingerprint's first letter for this ask (the journal's format: never change one). */
  readonly letter: string;
  /** The client capability a request must declare for it. */
  readonly capability: Capability;
  /** The helper an author calls, for messages. */
  readonly helper: string;
  /** The wire method of its embedded request. */
  readonly method: "elicitation/create" | "sampling/createMessage" | "roots/list";
}

/** The kinds of ask. */
export const ASK_KINDS = {
  elicit: { letter: "e", capability: "elicitation", helper: "elicit", method: "elicitation/create" },
  elicitUrl: { letter: "u", capability: "elicitation.url", helper: "elicitUrl", method: "elicitation/create" },
  sample: { letter: "s", capability: "sampling", helper: "sample", method: "sampling/createMessage" },
  roots: { letter: "r", capability: "roots", helper: "listRoots", method: "roots/list" },
} as const satisfies Record<string, AskKind>;

/** Every kind of effect: the asks, and the effects the runtime answers itself. */
export const EFFECT_KINDS = {
  ...ASK_KINDS,
  step: { helper: "step", letter: "S" },
  now: { helper: "now", letter: "N" },
  uuid: { helper: "uuid", letter: "U" },
  all: { helper: "all(...)", letter: "a" },
  task: { helper: "runAsTask", letter: "T" },
  patch: { helper: "patched", letter: "P" },
  sleep: { helper: "sleep", letter: "Z" },
  attempt: { helper: "step(..., { retry })", letter: "R" },
  progress: { helper: "progress", letter: "G" },
  signal: { helper: "waitForSignal", letter: "W" },
  // A race is two records: "X" when it begins (its timers' wake times), "Y" when a branch wins.
  race: { helper: "race", letter: "X" },
  // Never recorded itself: its steps are, each as a step.
  parallel: { helper: "all(...) over steps", letter: "L" },
} as const satisfies Record<string, { helper: string; letter: string }>;

/** The fingerprint letter of a `ctx.can(kind)` record (followed by the capability's ask letter). */
export const CAN_LETTER = "C";
/** The fingerprint letter of a race's end: which branch won, and its value. */
export const RACE_END_LETTER = "Y";

/** Each effect's fingerprint letter, by kind: the one place they are spelled (the journal's format: never change one). */
export const LETTER = { ...Object.fromEntries(Object.entries(EFFECT_KINDS).map(([kind, row]) => [kind, row.letter])), can: CAN_LETTER } as {
  readonly [K in keyof typeof EFFECT_KINDS]: (typeof EFFECT_KINDS)[K]["letter"];
} & { readonly can: typeof CAN_LETTER };

/** One kind of ask. */
export type AskKindName = keyof typeof ASK_KINDS;
/** One kind of effect. */
export type EffectKindName = keyof typeof EFFECT_KINDS;

// Sets of the tables' own keys ("toString" is not a kind).
const effectKindNames: ReadonlySet<unknown> = new Set(Object.keys(EFFECT_KINDS));
const askKindNames: ReadonlySet<unknown> = new Set(Object.keys(ASK_KINDS));
/**
 * Whether `kind` names an effect (own keys only: "toString" is not a kind). Every effect a
 * replay passes is checked — 465 per call replaying 30 asks 30 times — and most are elicitations
 * and steps, whose kinds are the helpers' string literals: compared first (a literal with a
 * literal is a reference comparison), before the Set lookup (which hashes) that answers for
 * every other value.
 */
export const isEffectKind = (kind: unknown): kind is EffectKindName => kind === "elicit" || kind === "step" || effectKindNames.has(kind);
/** Whether `kind` names an ask. */
export const isAskKind = (kind: unknown): kind is AskKindName => askKindNames.has(kind);

/** The ask kind whose fingerprints start with `letter`, with `all(...)` as "a". */
export const askByLetter: ReadonlyMap<string, { helper: string; capability?: Capability }> = new Map<string, { helper: string; capability?: Capability }>([
  ...Object.values(ASK_KINDS).map((k): [string, AskKind] => [k.letter, k]),
  [EFFECT_KINDS.all.letter, EFFECT_KINDS.all],
]);
/** The fingerprint letter of each capability (`ctx.can` records). */
export const capabilityLetter = Object.fromEntries(Object.values(ASK_KINDS).map((k) => [k.capability, k.letter])) as Record<Capability, string>;
