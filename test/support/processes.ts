import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";

/** A port free on loopback right now (for a process that must be told its port). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface Started {
  child: ChildProcess;
  /** The `ready` pattern's match in the process's stdout. */
  match: RegExpMatchArray;
  /** Everything the process printed so far (stdout and stderr), for failure messages. */
  output(): string;
}

/**
 * Spawn a server process and resolve once its stdout matches `ready` (it says it listens) — a
 * test waits for readiness instead of guessing a delay. Rejects with what the process printed if
 * it exits first or does not get ready within `timeoutMs`.
 */
export function startProcess(
  command: string,
  args: readonly string[],
  /** `ready: "spawned"`: resolve once the process runs (for one that prints nothing when it listens: probe it). */
  options: { cwd: string; env: NodeJS.ProcessEnv; ready: RegExp | "spawned"; timeoutMs?: number; what?: string },
): Promise<Started> {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let stdout = "";
  const what = options.what ?? `${command} ${args.join(" ")}`;
  child.stderr!.on("data", (d: Buffer) => (out += String(d)));
  return new Promise<Started>((resolve, reject) => {
    const timeoutMs = options.timeoutMs ?? 30_000;
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${what} did not get ready within ${timeoutMs} ms; it printed:\n${out}`));
    }, timeoutMs);
    const { ready } = options;
    if (ready === "spawned") {
      child.once("spawn", () => {
        clearTimeout(timer);
        resolve({ child, match: [""] as unknown as RegExpMatchArray, output: () => out });
      });
    }
    child.stdout!.on("data", (d: Buffer) => {
      out += String(d);
      stdout += String(d);
      const match = ready === "spawned" ? null : stdout.match(ready);
      if (match) {
        clearTimeout(timer);
        resolve({ child, match, output: () => out });
      }
    });
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code ?? signal}) before it was ready; it printed:\n${out}`));
    });
  });
}

/** SIGKILL (a crash) or SIGTERM (a graceful stop); resolves when the process is gone. */
export async function stopProcess(child: ChildProcess | undefined, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.kill(signal);
  });
}
