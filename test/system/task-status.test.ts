import { describe, expect, it } from "vitest";
import { callWithInput, createFetchSender } from "mcp-yield/client";
import { newKey, startCluster } from "../../scripts/stress/cluster.js";
import { deployedStores, exampleServerStores } from "../support/stores.js";

// Issue 58, point 4, over real processes: 1,000 tasks run on one example-server process (the
// runner) while their callers listen on another (the listener), as two instances behind a load
// balancer. Midway every open listen breaks off at once (the client opens them again) and the
// runner is killed (SIGKILL): its tasks are taken over by the listener's instance. Every task
// must end with its terminal status pushed — none learnt by polling — and the client sends
// tasks/get only as its backstop. On a Redis Cluster and through PgBouncer (no LISTEN there:
// the listener's instance re-reads the tasks) 100 tasks, without the faults.

const caps = { extensions: { "io.modelcontextprotocol/tasks": {} } };
const TASKS = 1_000;
const CONCURRENCY = 100;

interface Run {
  results: string[];
  gets: number;
  terminalByPoll: number;
  listens: number;
}

async function runTasks(storeEnv: Record<string, string>, count: number, faults: boolean): Promise<Run> {
  const [runner, listener] = await startCluster(2, newKey("s"), { ...storeEnv, MCP_YIELD_TASK_LEASE_MS: "1000" });
  let runnerAlive = true;
  let breakListens = new AbortController();
  const run: Run = { results: [], gets: 0, terminalByPoll: 0, listens: 0 };
  // The load balancer: calls go to the runner while it lives, everything else to the listener.
  const route = async (_input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const method = new Headers(init?.headers).get("mcp-method") ?? "";
    const url = method === "tools/call" && runnerAlive ? runner!.url : listener!.url;
    if (method === "subscriptions/listen") {
      run.listens++;
      const signal = init?.signal ? AbortSignal.any([init.signal, breakListens.signal]) : breakListens.signal;
      return fetch(url, { ...init, signal });
    }
    const response = await fetch(url, init);
    if (method === "tasks/get") {
      run.gets++;
      if (/"status":"(completed|failed|cancelled)"/.test(await response.clone().text())) run.terminalByPoll++;
    }
    return response;
  };
  const send = createFetchSender("http://balancer/mcp", { capabilities: caps, fetch: route as typeof fetch });
  try {
    let next = 0;
    const worker = async () => {
      while (next < count) {
        const n = next++;
        if (faults && n === Math.floor(count * 0.4)) {
          breakListens.abort(new Error("the load balancer dropped the streams"));
          breakListens = new AbortController();
        }
        if (faults && n === Math.floor(count * 0.6) && runnerAlive) {
          runnerAlive = false;
          await runner!.stop("SIGKILL");
        }
        const result = await callWithInput<{ content: Array<{ text: string }> }>(send, "tools/call", { name: "remind_later", arguments: { seconds: 1 } }, {}, { retries: 6, deadlineMs: 60_000 });
        run.results.push(result.content[0]!.text);
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, count) }, worker));
  } finally {
    await Promise.all([runner!.stop(), listener!.stop()]);
  }
  return run;
}

describe.each(exampleServerStores("task-status"))("pushed task status across two processes on %s", (_name, storeEnv) => {
  it(`${TASKS} tasks end with their terminal status pushed through a listener reconnect and a SIGKILL of the runner`, async () => {
    const run = await runTasks(storeEnv, TASKS, true);
    expect(run.results.length).toBe(TASKS);
    expect(new Set(run.results)).toEqual(new Set(["reminded"]));
    expect(run.terminalByPoll).toBe(0);
    // One listen per task, plus those opened again after the break.
    expect(run.listens).toBeGreaterThan(TASKS);
    // The backstop only: today's client polls each task at least once (about 3 times for a 1 s task).
    expect(run.gets).toBeLessThanOrEqual(TASKS / 10);
  }, 240_000);
});

describe.each(await deployedStores("task-status"))("pushed task status across two processes on %s", (_name, storeEnv) => {
  it("100 tasks end with their terminal status pushed", async () => {
    const run = await runTasks(storeEnv, 100, false);
    expect(new Set(run.results)).toEqual(new Set(["reminded"]));
    expect(run.results.length).toBe(100);
    expect(run.terminalByPoll).toBe(0);
    expect(run.gets).toBeLessThanOrEqual(10);
  }, 120_000);
});
