// What `npm run bench:tasks` compares: something that submits a zero-work job and awaits its
// end (a `Runner`), driven by `concurrency` callers for a while, in CPU time and calls per second.
// The task engine's runner: a task tool that returns at once, started with `callTool` and
// awaited as a listening caller awaits it — `listenTasks`, fed by the store's change feed.
import { randomBytes } from "node:crypto";
import { createRuntime, type Store } from "mcp-yield";
import { returning } from "./task-tools.js";

export interface Runner {
  name: string;
  /** Submit one zero-work job and resolve once it has completed (durably, as the system records it). */
  call(): Promise<void>;
  close(): Promise<void>;
}

export interface Throughput {
  perSecond: number;
  /** This process's CPU (user + system) per completed call, µs: the engine and its worker, or the queue's client and worker. */
  cpuMicrosPerCall: number;
}

const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } };

/** The engine on `store`: tasks kept 2 s (not an hour), spread over 256 callers (one keeps 1,000 tasks at most). */
export function engineRunner(store: Store, name: string): Runner {
  const runtime = createRuntime({ state: { keys: [{ id: "t", secret: randomBytes(32) }] }, store, onError: () => {}, tasks: { ttlMs: 2_000 } });
  const zero = returning("zero");
  runtime.define([zero]);
  let n = 0;
  return {
    name,
    async call() {
      const info = { clientCapabilities: TASKS, principal: `caller-${n++ % 256}` };
      const created = (await runtime.callTool(zero, { name: "zero", arguments: {} }, info)) as unknown as { taskId: string };
      await new Promise<void>((resolve, reject) => {
        let status = "";
        void runtime
          .listenTasks({ notifications: { taskIds: [created.taskId] } }, info, {
            frame: (task) => {
              status = task.status;
            },
            ended: () => (status === "completed" ? resolve() : reject(new Error(`engine: the task ended ${status}`))),
          })
          .then((watch) => watch.begin(), reject);
      });
    },
    async close() {
      await runtime.close();
    },
  };
}

/** `runner` driven by `concurrency` callers for `seconds` (after one warm-up call each). */
export async function throughput(runner: Runner, concurrency: number, seconds: number): Promise<Throughput> {
  await Promise.all(Array.from({ length: concurrency }, () => runner.call()));
  const cpu = process.cpuUsage();
  const started = performance.now();
  const until = started + seconds * 1000;
  let calls = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        await runner.call();
        calls++;
      }
    }),
  );
  const wall = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return { perSecond: calls / wall, cpuMicrosPerCall: (used.user + used.system) / calls };
}
