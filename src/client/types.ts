import type {
  ClientCapabilities,
  CreateMessageParams,
  CreateMessageResult,
  ElicitFormParams,
  ElicitResult,
  ElicitUrlParams,
  GetTaskResult,
  InputRequiredResult,
  ListRootsResult,
  Root,
} from "../wire/index.js";

// The client's vocabulary: what a caller hands the loop and what the loop tells it. Types only,
// so every client file can use them without importing the loop itself.

/**
 * One JSON-RPC request POSTed as stateless HTTP wants it, its HTTP response handed back as it
 * starts (a stream: `subscriptions/listen`); the sender's timeout bounds only the wait for its headers.
 */
export type OpenRequest = (method: string, params: Record<string, unknown>, signal: AbortSignal) => Promise<{ id: number; response: Response }>;

/** Opens listens (`createFetchSender` carries one), and how large one frame may be. */
export interface TaskListener {
  open: OpenRequest;
  maxFrameBytes: number;
}

/**
 * Sends one request with a fresh JSON-RPC id and returns its `result` (throws ClientError on a
 * JSON-RPC error). A sender may carry the capabilities it declares on every request.
 */
export type Send = ((method: string, params: Record<string, unknown>) => Promise<unknown>) & {
  readonly capabilities?: ClientCapabilities | undefined;
  /** How to open a `subscriptions/listen` stream (`createFetchSender` carries one): a followed task's status is then pushed. */
  readonly listener?: TaskListener | undefined;
};

/** Where an embedded request came from, for handlers that care. */
export interface AskContext {
  key: string;
  /** 1-based round of the call. */
  round: number;
  /** Aborted when another handler of the same round fails, or the caller's `signal` aborts. */
  signal: AbortSignal;
}

/**
 * An elicitation as the `elicit` handler gets it: `mode` is always set (a form request without
 * one, as the specification allows, arrives as `"form"`), so `switch (params.mode)` or
 * `if (params.mode === "form")` narrows to the form's `requestedSchema` or the URL's `url`.
 */
export type ElicitParams = (ElicitFormParams & { mode: "form" }) | ElicitUrlParams;

/** The caller's answers to the server's embedded requests. */
export interface InputHandlers {
  elicit?: (params: ElicitParams, ask: AskContext) => ElicitResult | Promise<ElicitResult>;
  sample?: (params: CreateMessageParams, ask: AskContext) => CreateMessageResult | Promise<CreateMessageResult>;
  roots?: (ask: AskContext) => ListRootsResult | Root[] | Promise<ListRootsResult | Root[]>;
}

/** What `onRound` is told about each `input_required` round. */
export interface RoundInfo {
  round: number;
  method: string;
  result: InputRequiredResult;
}

/** Options of `callWithInput`. */
export interface LoopOptions {
  /** Give up after this many input_required rounds. Default 10 (peers use 8–10). */
  maxRounds?: number;
  /** Most asks one round may carry; more end the call (`too_many_asks`). Default 32. */
  maxAsksPerRound?: number;
  /**
   * What this client declared: an ask for any other kind ends the call (`undeclared_kind`)
   * instead of being answered. Default: the sender's own (`createFetchSender` carries it), else
   * the kinds `handlers` can answer.
   */
  capabilities?: ClientCapabilities;
  /** Aborts the call between rounds and every handler's `signal`. */
  signal?: AbortSignal;
  /**
   * The whole call — every round, and following a task to its end — must end within this many
   * ms, or it ends with `deadline` (a task being followed is sent `tasks/cancel`). Default: none.
   */
  deadlineMs?: number;
  /**
   * The least time between two `tasks/get` polls, whatever `pollIntervalMs` the server suggests
   * (a server saying 1 ms would otherwise get a poll a millisecond). Default 100; lower it only
   * for servers you trust.
   */
  minPollIntervalMs?: number;
  /**
   * The first request's `_meta.idempotencyKey`: the server answers a repeat of it with the first
   * one's response or task (docs/exactly-once.md). Default: a fresh random key per call; `false`
   * sends none.
   */
  idempotencyKey?: string | false;
  /**
   * How often one request is sent again, unchanged, when it failed in a way a repeat gets past:
   * the server said so (`round_in_progress`, `idempotency_in_progress`, `store_unavailable`,
   * `request_aborted`, `code_unknown` — another instance has the code, mid-deploy), or — for the first request, which carries its idempotency key — the
   * connection failed. The same for a task's `tasks/get` and `tasks/update` while it is followed.
   * Repeats wait 200 ms, doubling (or what the server asks): 6 rides out a store outage of about
   * 12 s (a Redis failover, PgBouncer's login retry). Default 2; 0 turns it off.
   */
  retries?: number;
  /** Called with every input_required result before it is answered (logging, UIs). */
  onRound?: (info: RoundInfo) => void;
  /**
   * Hear a followed task's status pushed by the server (`subscriptions/listen`,
   * `notifications/tasks`) when the sender can open a stream (`createFetchSender`) and the server
   * pushes it; `tasks/get` is then sent only when no frame came for 10 s (or 10 poll intervals).
   * A stream that breaks off is opened again. Default true; `false` polls as before.
   */
  listen?: boolean;
  /** Called with every `tasks/get` answer (or pushed frame) while following a task (progress, UIs). */
  onTask?: (task: GetTaskResult) => void;
}
