import { execFile } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { until } from "./instances.js";
import { freePort, startProcess, stopProcess } from "./processes.js";

/**
 * A Redis Cluster on loopback, as users deploy one (ElastiCache and Valkey's serverless offerings
 * are cluster-only): `masters` masters and a replica each, from the `redis-server` this machine
 * has, made one cluster by `redis-cli --cluster create`. Under CI=true a missing binary is a
 * failure; locally the cluster tests skip and say how to install Redis.
 */
const SERVER = process.env.MCP_YIELD_TEST_REDIS_SERVER ?? "/usr/bin/redis-server";
const CLI = process.env.MCP_YIELD_TEST_REDIS_CLI ?? "/usr/bin/redis-cli";
const INSTALL = "apt-get install -y redis-server";
const run = promisify(execFile);

export const redisClusterAvailable: boolean = existsSync(SERVER) && existsSync(CLI);
if (!redisClusterAvailable) {
  if (process.env.CI === "true") throw new Error(`CI=true and no ${SERVER} / ${CLI}: the Redis Cluster tests must run. Install Redis: ${INSTALL}`);
  console.warn(`\n[mcp-yield tests] Redis Cluster tests SKIPPED: no ${SERVER}. Install it with:\n  ${INSTALL}\n(under CI=true a missing Redis is a failure)\n`);
}

export interface RunningRedisCluster {
  /** Every node's URL, masters first. */
  urls: string[];
  /** The masters' ports (each has one replica). */
  masterPorts(): Promise<number[]>;
  /** SIGKILL the node on `port` (a master dying: its replica takes over). */
  kill(port: number): Promise<void>;
  /** Start the node on `port` again (killed before); resolves once it is a replica in sync. */
  restart(port: number): Promise<void>;
  /**
   * Cut the master on `port` from its replica (CLIENT KILL TYPE replica): until the replica
   * connects again (its once-a-second retry) and catches up, writes reach only the master —
   * replication lagging, as it does under load.
   */
  cutReplica(port: number): Promise<void>;
  /** The port of the master that holds `key` now. */
  masterOf(key: string): Promise<number>;
  stop(): Promise<void>;
}

/** What `redis-cli -p <port> <args>` prints. */
async function cli(port: number, ...args: string[]): Promise<string> {
  return (await run(CLI, ["-h", "127.0.0.1", "-p", String(port), ...args])).stdout;
}

/** Start a cluster of `masters` masters with one replica each; resolves once every node sees every slot served. */
export async function startRedisCluster(masters = 3): Promise<RunningRedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), "mcp-yield-redis-cluster-"));
  const nodes = new Map<number, ChildProcess>();
  const stop = async () => {
    await Promise.all([...nodes.values()].map((child) => stopProcess(child, "SIGKILL")));
    nodes.clear();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // Each node's cluster bus gets a free port of its own (by default it is the port + 10000,
    // which another process may hold: a run failed on "bind: Address already in use" there).
    const busPorts = new Map<number, number>();
    const startNode = async (port: number) => {
      const started = await startProcess(
        SERVER,
        [
          ...["--port", String(port), "--bind", "127.0.0.1", "--protected-mode", "no", "--dir", dir, "--save", "", "--appendonly", "no"],
          ...["--cluster-enabled", "yes", "--cluster-config-file", join(dir, `nodes-${port}.conf`), "--cluster-node-timeout", "2000"],
          ...["--cluster-port", String(busPorts.get(port))],
          // A replica's first copy at once (not after the default 5 s wait for more replicas).
          ...["--repl-diskless-sync-delay", "0"],
        ],
        { cwd: dir, env: process.env, ready: /Ready to accept connections/, what: `redis-server (cluster node ${port})` },
      );
      nodes.set(port, started.child);
    };
    /** A node on fresh free ports, tried again on new ones if another process took one meanwhile. */
    const newNode = async (): Promise<number> => {
      for (let attempt = 1; ; attempt++) {
        const port = await freePort();
        let bus = await freePort();
        while (bus === port) bus = await freePort();
        busPorts.set(port, bus);
        try {
          await startNode(port);
          return port;
        } catch (error) {
          if (attempt >= 5 || !String((error as Error).message).includes("Address already in use")) throw error;
        }
      }
    };
    const ports: number[] = [];
    for (let i = 0; i < masters * 2; i++) ports.push(await newNode());
    await run(CLI, ["--cluster", "create", ...ports.map((p) => `127.0.0.1:${p}`), "--cluster-replicas", "1", "--cluster-yes"]);
    // Every node agrees the cluster is up, and every replica is in sync with its master.
    await until(async () => {
      for (const port of ports) if (!(await cli(port, "CLUSTER", "INFO")).includes("cluster_state:ok")) return undefined;
      return true;
    }, 30_000);
    const masterPorts = async () => {
      const lines = (await cli(ports.find((p) => nodes.has(p))!, "CLUSTER", "NODES")).trim().split("\n");
      return lines.filter((l) => l.includes("master") && !l.includes("fail")).map((l) => Number(l.split(" ")[1]!.split(":")[1]!.split("@")[0]));
    };
    await until(async () => ((await masterPorts()).length === masters ? true : undefined), 30_000);
    // Replicas past their first full copy: a write can then be confirmed by one (WAIT).
    await until(async () => {
      for (const port of await masterPorts()) if (!/slave0:.*state=online/.test(await cli(port, "INFO", "replication"))) return undefined;
      return true;
    }, 30_000);
    return {
      urls: ports.map((p) => `redis://127.0.0.1:${p}`),
      masterPorts,
      async masterOf(key) {
        const alive = ports.find((p) => nodes.has(p))!;
        const slot = Number((await cli(alive, "CLUSTER", "KEYSLOT", key)).trim());
        for (const line of (await cli(alive, "CLUSTER", "NODES")).trim().split("\n")) {
          const parts = line.split(" ");
          if (!parts[2]!.includes("master") || parts[2]!.includes("fail")) continue;
          for (const range of parts.slice(8)) {
            const [from, to] = range.split("-").map(Number);
            if (slot >= from! && slot <= (to ?? from)!) return Number(parts[1]!.split(":")[1]!.split("@")[0]);
          }
        }
        throw new Error(`no master serves slot ${slot} (of ${key})`);
      },
      async cutReplica(port) {
        await cli(port, "CLIENT", "KILL", "TYPE", "replica");
      },
      async kill(port) {
        await stopProcess(nodes.get(port), "SIGKILL");
        nodes.delete(port);
      },
      async restart(port) {
        // Its nodes file kept: it rejoins, a replica of whichever node took its place.
        await startNode(port);
        await until(async () => (/master_link_status:up/.test(await cli(port, "INFO", "replication")) ? true : undefined), 30_000);
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
