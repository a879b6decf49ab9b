import { ErrorCode, ProtocolError } from "../wire/index.js";
import type { Capability } from "../wire/index.js";
import type { StateBinding } from "../state/index.js";
import { describeFingerprint } from "../journal/journal.js";

/**
 * The code or its inputs changed between rounds: the recorded journal no longer matches what
 * the generator does now. Mapped to JSON-RPC `-32602` with `data.reason = "journal_divergence"`
 * and `data.restart = true`: the client should start the call again without requestState.
 */
export class DivergenceError extends ProtocolError {
  /** What differs, in words (without the advice to the client). */
  readonly what: string;
  constructor(
    readonly index: number,
    readonly recorded: string | undefined,
    readonly current: string | undefined,
    detail?: string,
    /** For an ask that changed: which parts (`kind`, `key`, `text`, `rest`). */
    changed?: readonly string[],
  ) {
    const what = detail ?? `at effect #${index} the journal recorded ${describeFingerprint(recorded)} but the code now runs ${describeFingerprint(current)}`;
    super(ErrorCode.InvalidParams, `requestState no longer matches this call: ${what}. Code before an ask must be deterministic (or inside step()); start the call again without requestState.`, {
      reason: "journal_divergence",
      index,
      recorded: recorded ?? null,
      current: current ?? null,
      ...(changed ? { changed } : {}),
      restart: true,
    });
    this.what = what;
  }
}

/**
 * The state or task was recorded by code this instance does not have — a `version` it does not
 * know (nor has retired), or a `patched()` marker its code does not make (nor has removed): newer
 * code, mid-deploy. Nothing ran and nothing is ended: the request is handed back (`-32603`,
 * `data.reason = "code_unknown"`, retryable — another instance has that code), a task is left to
 * an instance that has it.
 */
export class CodeUnknownError extends ProtocolError {
  constructor(readonly what: string) {
    super(ErrorCode.InternalError, `This server does not have the code that recorded this call (${what}): another one does (a deploy under way); send the same request again`, {
      reason: "code_unknown",
      retryAfterMs: 200,
    });
  }
}

const CAPABILITY_OBJECT: Record<Capability, Record<string, unknown>> = {
  elicitation: { elicitation: { form: {} } },
  "elicitation.url": { elicitation: { url: {} } },
  sampling: { sampling: {} },
  roots: { roots: {} },
};

/** Said when a request carried no capabilities envelope at all: the usual cause is the client, not the tool. */
export const NO_ENVELOPE_HINT =
  'the request carried no io.modelcontextprotocol/clientCapabilities at all — a 2025-era client, or an SDK client not pinned to 2026-07-28 (versionNegotiation: { mode: { pin: "2026-07-28" } } or "auto"), declares nothing per request';

/** The call needs a client capability this request did not declare (`-32021`). */
export class MissingCapabilityError extends ProtocolError {
  constructor(
    readonly missing: readonly Capability[],
    /** The request declared nothing at all (no envelope), which the message then explains. */
    noEnvelope = false,
  ) {
    const required = Object.assign({}, ...missing.map((m) => CAPABILITY_OBJECT[m])) as Record<string, unknown>;
    super(ErrorCode.MissingClientCapability, `This call needs client capabilities the request did not declare: ${missing.join(", ")}${noEnvelope ? ` (${NO_ENVELOPE_HINT})` : ""}`, {
      requiredCapabilities: required,
    });
  }
}

/** An exception thrown by author code (run body or step); carries the original as `cause`. */
export class AuthorCodeError extends Error {
  override readonly name = "AuthorCodeError";
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}

/**
 * The development double-run found that a round gives another result when replayed from the
 * state it produced than when it ran: the code is not deterministic (or mutates what effects
 * returned outside the journal's reach). Mapped to JSON-RPC `-32603`, `reason: "nondeterministic"`.
 */
export class NondeterminismError extends ProtocolError {
  constructor(
    readonly round: number,
    readonly detail: string,
    readonly index?: number,
  ) {
    super(ErrorCode.InternalError, `Round ${round} is not deterministic: ${detail}`, { reason: "nondeterministic", round, ...(index !== undefined ? { index } : {}) });
  }
}

/** Where an error reported to `onError` came from. */
export interface ErrorInfo {
  method: StateBinding["method"];
  target: string;
  /** 1 for the first round of a call. */
  round: number;
  /** The call's id (the same in every round of one call). */
  callId: string;
  /** Set when the error came from a task's background run (`round` is then 0). */
  taskId?: string;
}

/**
 * What the client is told when author code failed (the error itself goes to `onError`, never to
 * the client): one wording for tool results, task results and internal errors alike.
 */
export function authorFailureText(kind: "Tool" | "Prompt" | "Resource", name: string): string {
  return `${kind} "${name}" failed; the error was reported to the server.`;
}
