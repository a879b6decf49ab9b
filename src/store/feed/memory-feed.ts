import type { FeedListener, Listening, Notice } from "../store.js";

// store/feed/memory-feed.ts owns the in-memory store's change feed: the instances sharing one
// memory store are in one process, so a notice is handed to its channel's listeners directly —
// after the write's caller has its answer (a later task), as a feed across processes would.

/** Listeners by channel, and notices delivered to them. */
export function createFeedHub() {
  const channels = new Map<string, Set<FeedListener>>();
  return {
    publish(notice: Notice): void {
      const listeners = channels.get(notice.channel);
      if (listeners === undefined || listeners.size === 0) return;
      setImmediate(() => {
        for (const listener of listeners) listener.message(notice.message);
      });
    },
    listen(channel: string, listener: FeedListener): Listening {
      let listeners = channels.get(channel);
      if (listeners === undefined) channels.set(channel, (listeners = new Set()));
      const mine = { message: (m: string) => listener.message(m), reset: () => listener.reset() };
      listeners.add(mine);
      return {
        close: async () => {
          listeners.delete(mine);
          if (listeners.size === 0 && channels.get(channel) === listeners) channels.delete(channel);
        },
      };
    },
  };
}
