import type { FeedListener, Listening } from "../store.js";

// store/feed/shared-feed.ts owns sharing a store's change-feed subscription: every instance (and
// every engine) on one store object listening to a channel shares one subscription to it — one
// subscriber connection or LISTEN, not one each. Opening one costs connections and, on a Redis
// Cluster, a whole client's setup (measured: 10–200 ms of CPU each).

type Open = (channel: string, listener: FeedListener) => Promise<Listening | undefined>;

/**
 * `open` shared per channel: the first listen opens the subscription, later ones join it, the
 * last to close closes it. A subscription that could not open (`undefined`) is not kept: the
 * next listen tries again.
 */
export function sharedFeed(open: Open): Open {
  const channels = new Map<string, { listeners: Set<FeedListener>; opened: Promise<Listening | undefined> }>();
  return async (channel, listener) => {
    let entry = channels.get(channel);
    if (entry === undefined) {
      const listeners = new Set<FeedListener>();
      const everyone: FeedListener = {
        message: (message) => {
          for (const l of listeners) l.message(message);
        },
        reset: () => {
          for (const l of listeners) l.reset();
        },
      };
      const created = { listeners, opened: open(channel, everyone).catch(() => undefined) };
      channels.set(channel, (entry = created));
      void created.opened.then((opened) => {
        if (opened === undefined && channels.get(channel) === created) channels.delete(channel);
      });
    }
    const joined = entry;
    // A wrapper of its own: the same listener given twice is heard twice and closed once each.
    const mine: FeedListener = { message: (m) => listener.message(m), reset: () => listener.reset() };
    joined.listeners.add(mine);
    const opened = await joined.opened;
    if (opened === undefined) {
      joined.listeners.delete(mine);
      return undefined;
    }
    let closed = false;
    return {
      close: async () => {
        if (closed) return;
        closed = true;
        joined.listeners.delete(mine);
        if (joined.listeners.size > 0 || channels.get(channel) !== joined) return;
        channels.delete(channel);
        await opened.close();
      },
    };
  };
}
