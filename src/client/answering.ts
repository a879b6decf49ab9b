import { type Capability, capabilityOfRequest, type ClientCapabilities, type InputRequest } from "../wire/index.js";
import { ClientError } from "./errors.js";
import type { AskContext, InputHandlers } from "./types.js";

/**
 * Answering one round of asks, the same for plain rounds and for a task's input: the asks are
 * checked first (how many, and whether each kind was declared), then answered all at once.
 */

async function answerOne(request: InputRequest, handlers: InputHandlers, ask: AskContext): Promise<unknown> {
  switch (request.method) {
    case "elicitation/create":
      if (!handlers.elicit) throw new ClientError("no_handler", `the server asked "${ask.key}" for elicitation and no elicit handler is set`);
      return handlers.elicit(request.params.mode === "url" ? request.params : { ...request.params, mode: "form" }, ask);
    case "sampling/createMessage":
      if (!handlers.sample) throw new ClientError("no_handler", `the server asked "${ask.key}" for sampling and no sample handler is set`);
      return handlers.sample(request.params, ask);
    case "roots/list": {
      if (!handlers.roots) throw new ClientError("no_handler", `the server asked "${ask.key}" for roots and no roots handler is set`);
      const roots = await handlers.roots(ask);
      return Array.isArray(roots) ? { roots } : roots;
    }
  }
}

/** The kinds `handlers` can answer, as a declaration. */
export function declaredBy(handlers: InputHandlers): ClientCapabilities {
  return {
    ...(handlers.elicit ? { elicitation: { form: {}, url: {} } } : {}),
    ...(handlers.sample ? { sampling: {} } : {}),
    ...(handlers.roots ? { roots: {} } : {}),
  };
}

/** The checks `answerRound` applies before any handler runs, and the call's signal. */
export interface RoundChecks {
  /** What the caller declared (an ask for anything else ends the call). */
  can: (kind: Capability) => boolean;
  maxAsks: number;
  /** The call's own signal (aborts every handler). */
  signal: AbortSignal | undefined;
  /** For messages: the method or task being answered. */
  what: string;
}

/**
 * Check and answer one round's asks: more than `maxAsks` (`too_many_asks`) or a kind the caller
 * did not declare (`undeclared_kind`) ends the call before any handler runs. Handlers run at
 * once; the first failure aborts the others' signal.
 */
export async function answerRound(requests: Array<[string, InputRequest]>, handlers: InputHandlers, round: number, checks: RoundChecks): Promise<Record<string, unknown>> {
  if (requests.length > checks.maxAsks) throw new ClientError("too_many_asks", `${checks.what} asked ${requests.length} things in one round, more than this client's limit of ${checks.maxAsks}`);
  for (const [key, request] of requests) {
    const kind = capabilityOfRequest(request);
    if (!checks.can(kind)) throw new ClientError("undeclared_kind", `the server asked "${key}" for ${kind}, which this client did not declare`);
  }
  const outer = checks.signal;
  const siblings = new AbortController();
  const forward = () => siblings.abort(outer?.reason);
  outer?.addEventListener("abort", forward, { once: true });
  try {
    return Object.fromEntries(
      await Promise.all(
        requests.map(async ([key, request]) => {
          try {
            return [key, await answerOne(request, handlers, { key, round, signal: siblings.signal })] as const;
          } catch (error) {
            siblings.abort(error);
            throw error;
          }
        }),
      ),
    );
  } finally {
    outer?.removeEventListener("abort", forward);
  }
}
