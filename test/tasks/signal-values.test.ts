import { describe, expect, it } from "vitest";
import { createSignalHandler } from "mcp-yield";
import { closedAfterEach } from "../support/instances.js";
import { storesOf } from "../support/stores.js";
import { getTask, recordOf, refusalOf, settledTask, signalPair, waitingApproval } from "../support/signal-tasks.js";

// Every body a signal can carry gets a documented answer: a value the task's journal could not
// keep — over 64 KiB, nested deeper than 32, not plain JSON — is refused with 400
// (signal_invalid_value) before anything is written, and the task waits on for a good one.
// On memory, Redis and PostgreSQL; delivered where the task parked (resumed) and elsewhere (replayed).

const { stores } = storesOf("signal-values");
const open = closedAfterEach();

/** A value nested `depth` levels deep (arrays), built without recursion. */
const nested = (depth: number): unknown => {
  let v: unknown = 1;
  for (let i = 1; i < depth; i++) v = [v];
  return v;
};

describe.each(stores)("signal values on %s", (name, make) => {
  it.each(["resumed", "replayed"] as const)("values the journal cannot keep are refused with 400 before any write; the task waits on (%s)", async (how) => {
    const { store, a, via } = await signalPair(name, make, open, how);
    const { taskId, url, token } = await waitingApproval(a.runtime, store);
    const before = await store.get(`task:${taskId}`);
    const handler = createSignalHandler(via.runtime, { maxBodyBytes: 1024 * 1024 });
    const post = (body: string) => handler(new Request(url, { method: "POST", body, headers: { "content-type": "application/json" } }));
    // Too large (under the route's body limit), too deep (30,000 levels: no stack to overflow), 33 deep under a loose schema's reach.
    for (const body of [JSON.stringify({ approved: true, pad: "x".repeat(70 * 1024) }), "[".repeat(30_000) + "]".repeat(30_000), JSON.stringify({ approved: true, deep: nested(33) })]) {
      const res = await post(body);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe("signal_invalid_value");
    }
    // Not plain JSON, from code: a Date, NaN, a Map, a class instance.
    for (const value of [
      { approved: true, at: new Date(0) },
      { approved: true, n: Number.NaN },
      new Map([["approved", true]]),
      new (class Vote {
        approved = true;
      })(),
    ]) {
      expect(refusalOf(await via.runtime.signal(token, value).catch((e: unknown) => e))).toBe("signal_invalid_value");
    }
    // Nothing was written: the record is as the wait left it, the task still waiting.
    expect(await store.get(`task:${taskId}`)).toBe(before);
    expect((await getTask(via.runtime, taskId)).status).toBe("working");
    expect((await recordOf(store, taskId)).awaits).toBeDefined();
    // The wait takes a good value after all that.
    expect((await post(JSON.stringify({ approved: true }))).status).toBe(200);
    expect((await settledTask(via.runtime, taskId)).result!.content[0]!.text).toBe("approved");
  });
});
