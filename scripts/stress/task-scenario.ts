import { type Instance, newKey, startCluster } from "./cluster.js";
import { runTaskLoad, type TaskLoadReport } from "./task-load.js";
import { timeline } from "./timeline.js";

/**
 * The task scenario: N example-server processes sharing keys and one Redis; task calls in
 * flight (parked on asks, or running a three-second step) while one instance is killed with
 * SIGKILL and restarted. Its running tasks must be taken over by the others when their lease
 * runs out, and every call must end exactly once with the right result.
 */

export interface TaskScenarioReport extends TaskLoadReport {
  instances: number;
  leaseMs: number;
  events: string[];
  seconds: number;
}

export async function runTaskScenario(options: {
  instances: number;
  calls: number;
  thinkMs: [number, number];
  /** The shared store, as the example server reads it from its environment (MCP_YIELD_REDIS_URL…, MCP_YIELD_POSTGRES_URL…). */
  storeEnv: Record<string, string>;
  /** The instances' task lease (MCP_YIELD_TASK_LEASE_MS); the default 10 s when absent. */
  leaseMs?: number;
  log?: (line: string) => void;
}): Promise<TaskScenarioReport> {
  const log = options.log ?? (() => {});
  const started = Date.now();
  const env = { ...options.storeEnv, ...(options.leaseMs ? { MCP_YIELD_TASK_LEASE_MS: String(options.leaseMs) } : {}) };
  const cluster: Instance[] = await startCluster(options.instances, newKey("t1"), env);
  const story = timeline(log, started);
  const at = (what: string) => story.at(what);
  at(`${options.instances} instances up, sharing ${options.storeEnv.MCP_YIELD_POSTGRES_URL !== undefined ? "PostgreSQL" : "Redis"}`);
  try {
    const progress = { report: undefined as TaskLoadReport | undefined };
    let chaos: Promise<void> = Promise.resolve();
    const load = runTaskLoad(cluster, { calls: options.calls, thinkMs: options.thinkMs, deadlineMs: 240_000, onStart: (r) => (progress.report = r), settled: () => chaos }).then((r) => {
      at(`load finished: ${r.completed}/${r.calls} completed`);
      return r;
    });
    story.inFlight = () => progress.report?.inFlight ?? 0;
    chaos = (async () => {
      // Mid-run: answers given, three-second render steps under way on every instance.
      await new Promise((r) => setTimeout(r, options.thinkMs[1] + 1500));
      at("instance 1 killed (SIGKILL)");
      await cluster[1]!.stop("SIGKILL");
      await new Promise((r) => setTimeout(r, 300));
      await cluster[1]!.start();
      at("instance 1 restarted");
    })();
    const [report] = await Promise.all([load, chaos]);
    return { ...report, instances: options.instances, leaseMs: options.leaseMs ?? 10_000, events: story.events, seconds: (Date.now() - started) / 1000 };
  } finally {
    await Promise.all(cluster.map((i) => i.stop("SIGTERM")));
  }
}
