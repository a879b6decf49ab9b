import { describe, expect, it } from "vitest";
import { sharedFeed } from "../../src/store/feed/shared-feed.js";
import type { FeedListener } from "../../src/store/store.js";

// One subscription per channel however many instances on one store listen (the store's own
// feeds are tested against the real servers in store-contract.test.ts): what opens and closes when.

function fakeFeed(fail = 0) {
  const opened: Array<{ channel: string; listener: FeedListener; closed: boolean }> = [];
  let failing = fail;
  const open = async (channel: string, listener: FeedListener) => {
    if (failing-- > 0) return undefined;
    const sub = { channel, listener, closed: false };
    opened.push(sub);
    return { close: async () => void (sub.closed = true) };
  };
  return { opened, listen: sharedFeed(open) };
}

describe("sharedFeed", () => {
  it("opens one subscription per channel for listeners joining at once or later, fans out notices and resets, and closes it with the last listener", async () => {
    const { opened, listen } = fakeFeed();
    const heard: string[] = [];
    const listener = (who: string): FeedListener => ({ message: (m) => heard.push(`${who}:${m}`), reset: () => heard.push(`${who}:reset`) });
    const [a, b] = await Promise.all([listen("tasks", listener("a")), listen("tasks", listener("b"))]);
    const c = await listen("other", listener("c"));
    expect(opened.map((o) => o.channel)).toEqual(["tasks", "other"]);
    opened[0]!.listener.message("m1");
    opened[0]!.listener.reset();
    expect(heard).toEqual(["a:m1", "b:m1", "a:reset", "b:reset"]);
    await a!.close();
    await a!.close();
    expect(opened[0]!.closed).toBe(false);
    opened[0]!.listener.message("m2");
    expect(heard.slice(4)).toEqual(["b:m2"]);
    await b!.close();
    expect(opened[0]!.closed).toBe(true);
    expect(opened[1]!.closed).toBe(false);
    await c!.close();
    // A listen after the last close opens a new subscription.
    const d = await listen("tasks", listener("d"));
    expect(opened).toHaveLength(3);
    await d!.close();
  });

  it("a subscription that could not open is not kept: those waiting on it get undefined, the next listen tries again", async () => {
    const { opened, listen } = fakeFeed(1);
    const noop: FeedListener = { message: () => {}, reset: () => {} };
    expect(await Promise.all([listen("tasks", noop), listen("tasks", noop)])).toEqual([undefined, undefined]);
    const later = await listen("tasks", noop);
    expect(later).toBeDefined();
    expect(opened).toHaveLength(1);
    await later!.close();
    expect(opened[0]!.closed).toBe(true);
  });

  it("an open that throws is taken as not open (undefined), not a rejection", async () => {
    const listen = sharedFeed(async () => {
      throw new Error("boom");
    });
    expect(await listen("tasks", { message: () => {}, reset: () => {} })).toBeUndefined();
  });
});
