import { type Instance, newKey, startCluster } from "./cluster.js";
import { type LoadReport, runLoad } from "./cluster-load.js";
import { timeline } from "./timeline.js";

/**
 * The multi-instance scenario: N instances sharing a key ring; calls in flight while one
 * instance is killed (SIGKILL) and restarted, and while the key ring is rotated by rolling
 * restarts in two phases — (1) `old,new`: every instance accepts the new key while still
 * sealing with the old one; (2) `new,old`: every instance seals with the new key. A token is
 * therefore only ever minted with a key every instance already accepts.
 */

export interface ScenarioReport extends LoadReport {
  instances: number;
  events: string[];
  seconds: number;
}

export async function runScenario(options: {
  instances: number;
  calls: number;
  thinkMs: [number, number];
  /** `one-phase` (straight to `new,old`) exists to show why two phases are needed. */
  rotation?: "two-phase" | "one-phase";
  log?: (line: string) => void;
}): Promise<ScenarioReport> {
  const log = options.log ?? (() => {});
  const started = Date.now();
  const oldKey = newKey("k1");
  const nextKey = newKey("k2");
  const cluster: Instance[] = await startCluster(options.instances, oldKey);
  const story = timeline(log, started);
  const at = (what: string) => story.at(what);
  at(`${options.instances} instances up`);
  try {
    const progress = { report: undefined as LoadReport | undefined };
    // A third of the calls hold their last answer until the chaos is over, so their states are
    // sealed before the crash and the rotation and presented after both.
    let release = () => {};
    const hold = new Promise<void>((resolve) => (release = resolve));
    const load = runLoad(cluster, { calls: options.calls, thinkMs: options.thinkMs, hold, onStart: (r) => (progress.report = r) }).then((r) => {
      at(`load finished: ${r.completed}/${r.calls} completed`);
      return r;
    });
    story.inFlight = () => progress.report?.inFlight ?? 0;
    const chaos = (async () => {
      await new Promise((r) => setTimeout(r, options.thinkMs[1]));
      at("instance 1 killed (SIGKILL)");
      await cluster[1]!.stop("SIGKILL");
      await new Promise((r) => setTimeout(r, 300));
      await cluster[1]!.start();
      at("instance 1 restarted");
      const phases: Array<[string, string]> =
        options.rotation === "one-phase"
          ? [["straight to (new,old)", `${nextKey},${oldKey}`]]
          : [
              ["1: accept the new key (old,new)", `${oldKey},${nextKey}`],
              ["2: seal with the new key (new,old)", `${nextKey},${oldKey}`],
            ];
      for (const [phase, keys] of phases) {
        for (const [i, instance] of cluster.entries()) {
          await instance.restart(keys);
          at(`rotation phase ${phase}: instance ${i} restarted`);
        }
      }
      release();
    })();
    const [report] = await Promise.all([load, chaos]);
    return { ...report, instances: options.instances, events: story.events, seconds: (Date.now() - started) / 1000 };
  } finally {
    await Promise.all(cluster.map((i) => i.stop("SIGTERM")));
  }
}
