import { describe, expect, it } from "vitest";
import { createPostgresNotifier } from "../../src/store/feed/postgres-notifier.js";

// The PostgreSQL store's notices leave after their write, many in one statement: one NOTIFY
// commit per batch instead of per write (each took a database-wide lock at commit).

function fakeSend() {
  const batches: Array<Array<[string, string]>> = [];
  const pending: Array<{ resolve: () => void; reject: (e: unknown) => void }> = [];
  const send = (channels: string[], payloads: string[]) =>
    new Promise<void>((resolve, reject) => {
      batches.push(channels.map((c, i) => [c, payloads[i]!]));
      pending.push({ resolve, reject });
    });
  return { send, batches, finish: () => pending.shift()!.resolve(), fail: () => pending.shift()!.reject(new Error("connection lost")) };
}

describe("the PostgreSQL notifier", () => {
  it("sends a notice at once when none is on its way, and those published meanwhile together, in order", async () => {
    const fake = fakeSend();
    const notifier = createPostgresNotifier(fake.send);
    notifier.publish("c", "1");
    expect(fake.batches).toEqual([[["c", "1"]]]);
    notifier.publish("c", "2");
    notifier.publish("d", "3");
    notifier.publish("c", "4");
    expect(fake.batches).toHaveLength(1);
    fake.finish();
    await expect.poll(() => fake.batches.length).toBe(2);
    expect(fake.batches[1]).toEqual([
      ["c", "2"],
      ["d", "3"],
      ["c", "4"],
    ]);
    const drained = notifier.drained();
    fake.finish();
    await drained;
  });

  it("goes on after a batch that failed (those notices are lost: latency, never a task)", async () => {
    const fake = fakeSend();
    const notifier = createPostgresNotifier(fake.send);
    notifier.publish("c", "lost");
    notifier.publish("c", "next");
    fake.fail();
    await expect.poll(() => fake.batches.length).toBe(2);
    expect(fake.batches[1]).toEqual([["c", "next"]]);
    fake.finish();
    await notifier.drained();
  });

  it("drained() waits for every batch, those queued behind the one on its way too", async () => {
    const fake = fakeSend();
    const notifier = createPostgresNotifier(fake.send);
    notifier.publish("c", "1");
    notifier.publish("c", "2");
    let done = false;
    const drained = notifier.drained().then(() => (done = true));
    fake.finish();
    await expect.poll(() => fake.batches.length).toBe(2);
    expect(done).toBe(false);
    fake.finish();
    await drained;
    expect(done).toBe(true);
  });
});
