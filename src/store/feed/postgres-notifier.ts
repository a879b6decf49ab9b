// store/feed/postgres-notifier.ts owns sending the PostgreSQL store's notices: after the write
// they announce has committed, many in one statement. A transaction that NOTIFYs takes a
// database-wide lock at commit and holds it through its WAL flush, so every write carrying its
// own NOTIFY waited for the one before it: with 3,000 tasks waking at once, most of the store's
// connections sampled were waiting on that lock (`Lock:object`), and the engine woke about 300
// tasks a second. Batched, the lock is taken once per batch. Only committed writes are announced
// (a notice is queued once its write returned); a notice lost with its process costs latency, as
// any lost notice does (the due index and the watches re-read), never a task.

/** Notices queued while a batch is being sent go out together in the next one. */
export function createPostgresNotifier(send: (channels: string[], payloads: string[]) => Promise<unknown>) {
  let queued: Array<[channel: string, payload: string]> = [];
  let sending: Promise<void> | undefined;

  function flush(): void {
    const batch = queued;
    queued = [];
    sending = send(
      batch.map(([channel]) => channel),
      batch.map(([, payload]) => payload),
    )
      .then(
        () => {},
        // The pool's trouble is reported where the writes meet it; a lost notice only costs latency.
        () => {},
      )
      .finally(() => {
        sending = undefined;
        if (queued.length > 0) flush();
      });
  }

  return {
    /** Announce `payload` on `channel` (in order: a batch at a time, each in the order queued). */
    publish(channel: string, payload: string): void {
      queued.push([channel, payload]);
      if (sending === undefined) flush();
    },
    /** Settles once every notice published so far was sent (or given up). */
    async drained(): Promise<void> {
      while (sending !== undefined) await sending;
    },
  };
}
