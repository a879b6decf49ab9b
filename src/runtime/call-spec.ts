import type { CodeVersions, RunContext, RunGenerator } from "../authoring/definitions.js";
import type { JournalRecord } from "../journal/journal.js";
import type { CallContext } from "../replay/call-context.js";
import type { Suspended } from "../replay/round/round.js";
import type { StateBinding } from "../state/index.js";

// What the round host and single use both know of a call: its definition, binding and state.

export /** One call's shared parts, whatever the method. */
interface CallSpec<R, T = never> {
  /** The definition being run (live generators are only resumed under the same one). */
  owner: object;
  /** The definition's own name: the tool's or prompt's name, the resource's uri or the template (never client text). */
  definition: string;
  binding: StateBinding;
  /** Its version, and what it knows of earlier code (retired versions, removed patches). */
  code: CodeVersions;
  requestState: string | undefined;
  /** A first request's idempotency key (the client's, or the tool's own): the round is redeemed once under it (runtime/single-use/idempotency.ts). */
  idempotencyKey?: string | undefined;
  /** The arguments' approximate JSON size: a generator held between rounds holds them, and is charged for them. */
  argumentBytes?: number | undefined;
  inputResponses: Record<string, unknown> | undefined;
  start: (ctx: RunContext) => RunGenerator<unknown>;
  /** Turn the completed value into the method's result (throws ResultShapeError). */
  shape: (value: unknown) => R;
  /** What an author failure becomes: an isError tool result, or a JSON-RPC internal error. */
  onAuthorFailure: () => R;
  /** Set when the call may become a task at `runAsTask()`: hands it over to the task engine. */
  becomeTask?: (handover: { journal: JournalRecord[]; message: string | undefined; callId: string; taskId: string; resume: { suspended: Suspended; context: CallContext } }) => Promise<T>;
}
