import { progress, sleep, step, tool, waitForSignal } from "mcp-yield";
import { z } from "zod";

/**
 * Durable tasks written as plain code: a reminder that sleeps in the store, an approval that
 * waits for a webhook, and a fetch that retries with backoff. Each runs as a task (the client
 * declares the tasks extension), survives its instance dying, and goes on on any instance.
 */

export const remindLater = tool({
  name: "remind_later",
  description: "Waits `seconds` durably (no instance holds the task meanwhile), then completes",
  input: z.object({ seconds: z.number().min(0).max(3000) }),
  task: "required",
  async *run({ seconds }) {
    yield* progress(`Sleeping ${seconds}s`);
    yield* sleep(seconds * 1000);
    return "reminded";
  },
});

const Approval = z.object({ approved: z.boolean() });

export const awaitApproval = tool({
  name: "await_approval",
  description: 'Waits up to 60 s for a person to approve: POST {"approved": true} (or false) to the URL in the task\'s status message',
  input: z.object({ what: z.string().max(200).optional() }),
  task: "required",
  async *run({ what }, ctx) {
    const url = ctx.signalUrl("approval");
    // A fixture: the URL goes in the status message so tests and the demo can reach it. A real
    // tool sends it to the approver from a step — whoever sees the status message (the
    // requester) could otherwise approve their own request.
    yield* progress(`Waiting for approval${what ? ` of ${what}` : ""}: POST {"approved": true} or {"approved": false} to ${url}`);
    const answer = yield* waitForSignal("approval", Approval, { timeoutMs: 60_000 });
    if (answer.status === "timeout") return "timed out: nobody answered within 60 s";
    return answer.value.approved ? "approved" : "rejected";
  },
});

export const approveLater = tool({
  name: "approve_later",
  description: 'Sleeps `delaySeconds` durably, then waits up to 60 s for approval: POST {"approved": true} (or false) to the URL in the status message — at any time, also during the sleep',
  input: z.object({ delaySeconds: z.number().min(0).max(3000) }),
  task: "required",
  async *run({ delaySeconds }, ctx) {
    // A fixture: the URL goes in the status message so tests can reach it; a real tool sends
    // it to the approver from a step, or the requester could approve their own request.
    yield* progress(`Approval URL: ${ctx.signalUrl("approval")}`);
    yield* sleep(delaySeconds * 1000);
    // An approval POSTed during the sleep was kept for this wait (202): it is taken here at once.
    const answer = yield* waitForSignal("approval", Approval, { timeoutMs: 60_000 });
    if (answer.status === "timeout") return "timed out";
    return answer.value.approved ? "approved" : "rejected";
  },
});

export const flakyFetch = tool({
  name: "flaky_fetch",
  description: "A fetch that fails twice, then succeeds: retried with backoff",
  input: z.object({}),
  task: "required",
  async *run() {
    const body = yield* step(
      "fetch",
      (_signal, attempt) => {
        if (attempt < 3) throw new Error(`upstream answered 503 (attempt ${attempt})`);
        return `attempts: ${attempt}`;
      },
      { retry: { attempts: 5, initialMs: 500, factor: 2 } },
    );
    return body;
  },
});

export const durableFixtures = [remindLater, awaitApproval, approveLater, flakyFetch];
