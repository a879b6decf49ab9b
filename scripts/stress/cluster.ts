import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { freePort, startProcess, stopProcess } from "../../test/support/processes.js";

/**
 * Example-server processes on loopback: `npm start` as a user would run it (tsx, the
 * MCP_YIELD_KEYS env var), each on a fixed port so a restarted instance comes back at the
 * same address.
 */

const root = fileURLToPath(new URL("../..", import.meta.url));

export class Instance {
  private child: ChildProcess | undefined;
  constructor(
    readonly port: number,
    public keys: string,
    /** More environment (e.g. MCP_YIELD_REDIS_URL to share tasks through Redis). */
    readonly env: Record<string, string> = {},
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`;
  }

  /** Start and resolve once the server prints that it listens. */
  async start(keys = this.keys): Promise<void> {
    this.keys = keys;
    const started = await startProcess(process.execPath, ["--conditions=mcp-yield-source", "--import", "tsx", "examples/server.ts"], {
      cwd: root,
      env: { ...process.env, ...this.env, PORT: String(this.port), MCP_YIELD_KEYS: keys },
      ready: /listening on/,
      what: `instance on ${this.port}`,
    });
    this.child = started.child;
  }

  /** SIGKILL (a crash) or SIGTERM (a graceful restart); resolves when the process is gone. */
  async stop(signal: "SIGKILL" | "SIGTERM" = "SIGTERM"): Promise<void> {
    const child = this.child;
    this.child = undefined;
    await stopProcess(child, signal);
  }

  async restart(keys = this.keys, signal: "SIGKILL" | "SIGTERM" = "SIGTERM"): Promise<void> {
    await this.stop(signal);
    await this.start(keys);
  }
}

export async function startCluster(n: number, keys: string, env: Record<string, string> = {}): Promise<Instance[]> {
  const instances = await Promise.all(Array.from({ length: n }, async () => new Instance(await freePort(), keys, env)));
  await Promise.all(instances.map((i) => i.start()));
  return instances;
}

/** A fresh random key ring entry `id:base64secret`. */
export function newKey(id: string): string {
  return `${id}:${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64")}`;
}
