/**
 * A scenario's timeline: each event stamped with the seconds since `started` and the calls in
 * flight at that moment (`inFlight` is set once the load is running), logged as it happens.
 */
export function timeline(log: (line: string) => void, started: number) {
  const events: string[] = [];
  const t = {
    events,
    inFlight: () => 0,
    at(what: string): void {
      const line = `${((Date.now() - started) / 1000).toFixed(1)}s ${what} (${t.inFlight()} calls in flight)`;
      events.push(line);
      log(line);
    },
  };
  return t;
}
