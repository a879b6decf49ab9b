import { describe, expect, it } from "vitest";
import { closedAfterEach } from "../support/instances.js";
import { testKey } from "../support/keys.js";
import { storesOf } from "../support/stores.js";
import { recordOf, refusalOf, settledTask, signalInstance, signalPair, TASKS_INFO, waitingApproval } from "../support/signal-tasks.js";

// What a signal URL grants (issue 57, points 3 and 5): nothing but the one delivery — its token
// is sealed, so it names no task to whoever holds it — and it keeps working through a key
// rotation done as docs/operations.md says (the old key kept in the ring while tasks live).
// On memory, Redis and PostgreSQL.

const { stores } = storesOf("signal-tokens");
const open = closedAfterEach();
const refusedBy = (p: Promise<unknown>) => p.then(() => "taken", refusalOf);

/** Every text a token's segments could hide: as is, and decoded from base64url. */
const readable = (token: string) => [token, ...token.split(".").map((s) => Buffer.from(s, "base64url").toString("latin1"))];

describe.each(stores)("signal tokens on %s", (name, make) => {
  it.each(["resumed", "replayed"] as const)("a signal URL names no task: nothing in it reads, answers or cancels the task (%s)", async (how) => {
    const { store, a, via } = await signalPair(name, make, open, how);
    const { taskId, url, token } = await waitingApproval(a.runtime, store);
    for (const text of readable(url.slice(url.lastIndexOf("/") + 1))) expect(text).not.toContain(taskId);
    // Whatever the URL holds is no task id: tasks/get and tasks/cancel with it know no task.
    for (const segment of [token, ...token.split(".")]) {
      expect(await via.runtime.getTask({ taskId: segment }, TASKS_INFO).catch((e: unknown) => (e as Error).message)).toMatch(/Unknown task/);
      expect(await via.runtime.cancelTask({ taskId: segment }, TASKS_INFO).catch((e: unknown) => (e as Error).message)).toMatch(/Unknown task/);
    }
    // A token altered anywhere is refused; the real one delivers.
    const altered = token.slice(0, -2) + (token.endsWith("AA") ? "BB" : "AA");
    expect(await refusedBy(via.runtime.signal(altered, { approved: true }))).toBe("signal_invalid_token");
    expect(await via.runtime.signal(token, { approved: true })).toEqual({ status: "delivered" });
    expect((await settledTask(via.runtime, taskId)).result!.content[0]!.text).toBe("approved");
  });

  it("a token signed before tokens were sealed still opens its wait while its task lives", async () => {
    const { store, a } = await signalPair(name, make, open, "resumed");
    const { taskId } = await waitingApproval(a.runtime, store);
    const r = await recordOf(store, taskId);
    const signed = a.runtime.codec.signText("task-signal", JSON.stringify({ t: taskId, w: "approval", i: 0, e: (r.created as number) + (r.ttlMs as number) }));
    expect(await a.runtime.signal(signed, { approved: false })).toEqual({ status: "delivered" });
    expect((await settledTask(a.runtime, taskId)).result!.content[0]!.text).toBe("rejected");
  });

  it("a key rotation keeps signal URLs working while the old key stays in the ring; without it they are refused", async () => {
    const [oldKey, newKey] = [testKey("old", 41), testKey("new", 42)];
    // Before: every instance on `old`; the task parks with a URL sealed under it.
    const { store, a, b } = await signalPair(name, make, open, "replayed", { keys: [oldKey], otherKeys: [newKey, oldKey] });
    const { taskId, token } = await waitingApproval(a.runtime, store);
    // An instance already on `new` alone (step 3 done too early) refuses the URL, and writes nothing.
    const early = signalInstance(store, open, { keys: [newKey] });
    const before = await store.get(`task:${taskId}`);
    expect(await refusedBy(early.runtime.signal(token, { approved: true }))).toBe("signal_invalid_token");
    expect(await store.get(`task:${taskId}`)).toBe(before);
    // Phase 2 (`new,old`): the URL sealed under `old` delivers, and the task replays there.
    expect(await b.runtime.signal(token, { approved: true })).toEqual({ status: "delivered" });
    expect((await settledTask(b.runtime, taskId)).result!.content[0]!.text).toBe("approved");
  });
});
