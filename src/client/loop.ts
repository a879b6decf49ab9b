import { z } from "zod";
import { type Capability, capabilityCheck, createTaskResult, declaresExtension, TASKS_EXTENSION, inputRequiredResult, describeZodError, type MultiRoundMethod } from "../wire/index.js";
import { answerRound, declaredBy } from "./answering.js";
import type { InputHandlers, LoopOptions, Send } from "./types.js";
import { sendRetrying } from "./retry.js";
import { ClientError } from "./errors.js";
import { followTask } from "./task-follow.js";

const resultTypeOnly = z.looseObject({ resultType: z.string().optional() });

/**
 * The MRTR client loop: send the request; while the result is `input_required`, answer every
 * embedded request with `handlers` and retry the same method and params with a new id, the
 * answers as `inputResponses` and the `requestState` echoed byte-for-byte (absent when none
 * came). A missing `resultType` means complete; an unknown one is refused. When the caller
 * declared the tasks extension and the server answers with a task, the task is followed to its
 * end (see `followTask`).
 */
export async function callWithInput<R = Record<string, unknown>>(
  send: Send,
  method: MultiRoundMethod,
  params: Record<string, unknown>,
  handlers: InputHandlers,
  options: LoopOptions = {},
): Promise<R> {
  const maxRounds = options.maxRounds ?? 10;
  const minPollMs = options.minPollIntervalMs ?? 100;
  if (!(minPollMs >= 0)) throw new TypeError(`minPollIntervalMs must be a non-negative number, got ${String(options.minPollIntervalMs)}`);
  if (options.deadlineMs !== undefined && !(options.deadlineMs > 0)) throw new TypeError(`deadlineMs must be a positive number, got ${String(options.deadlineMs)}`);
  const deadline = options.deadlineMs !== undefined ? AbortSignal.timeout(options.deadlineMs) : undefined;
  const signal = deadline && options.signal ? AbortSignal.any([options.signal, deadline]) : (deadline ?? options.signal);
  const stopped = () =>
    deadline?.aborted ? new ClientError("deadline", `${method} did not end within its deadline of ${options.deadlineMs} ms`) : new ClientError("aborted", `${method} was aborted`);
  const maxAsks = options.maxAsksPerRound ?? 32;
  const declared = options.capabilities ?? send.capabilities ?? declaredBy(handlers);
  const can: (kind: Capability) => boolean = capabilityCheck(declared);
  // Never carry answers or state from elsewhere: each call starts from its own params.
  const { inputResponses: _r, requestState: _s, ...base } = params;
  const key = options.idempotencyKey ?? crypto.randomUUID();
  const first: Record<string, unknown> = key === false ? base : { ...base, _meta: { ...(base._meta as Record<string, unknown> | undefined), idempotencyKey: key } };
  const retries = options.retries ?? 2;
  if (!(Number.isInteger(retries) && retries >= 0)) throw new TypeError(`retries must be a non-negative integer, got ${String(options.retries)}`);
  let next: Record<string, unknown> = first;
  for (let round = 1; ; round++) {
    if (signal?.aborted) throw stopped();
    const raw = await sendRetrying(send, method, next, { retries, keyed: round === 1 && key !== false, signal });
    const typed = resultTypeOnly.safeParse(raw);
    if (!typed.success) throw new ClientError("invalid_result", `${method} returned a result that is not an object`);
    const kind = typed.data.resultType ?? "complete";
    if (kind === "complete") return raw as R;
    if (kind === "task" && declaresExtension(declared, TASKS_EXTENSION)) {
      const created = createTaskResult.safeParse(raw);
      if (!created.success) throw new ClientError("invalid_result", `invalid CreateTaskResult: ${describeZodError(created.error)}`);
      return followTask<R>(send, created.data, handlers, { can, maxAsks, maxRounds, signal, deadline, minPollMs, retries, onTask: options.onTask, listen: options.listen ?? true });
    }
    if (kind !== "input_required") throw new ClientError("unknown_result_type", `${method} returned an unknown resultType "${kind}"`);
    const parsed = inputRequiredResult.safeParse(raw);
    if (!parsed.success) throw new ClientError("invalid_result", `invalid input_required result: ${describeZodError(parsed.error)}`);
    if (round > maxRounds) throw new ClientError("round_limit", `${method} still needed input after ${maxRounds} rounds; giving up`);
    options.onRound?.({ round, method, result: parsed.data });
    const requests = Object.entries(parsed.data.inputRequests ?? {});
    const answers = await answerRound(requests, handlers, round, { can, maxAsks, signal, what: method });
    if (signal?.aborted) throw stopped();
    next = { ...base };
    if (requests.length > 0) next.inputResponses = answers;
    if (parsed.data.requestState !== undefined) next.requestState = parsed.data.requestState;
  }
}
