import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The repository's dist/ held by one test file at a time. Two system files build into it — the
 * package test (`npm run build` empties it first) and the API reference test — and the system
 * files run two at a time: either could otherwise read the other's half-built tree.
 *
 * The lock is a directory (mkdir is atomic) named after the checkout, holding its owner's pid:
 * a holder that died (a killed test run) is noticed by its pid and its lock taken over.
 */
const root = fileURLToPath(new URL("../..", import.meta.url));
const lock = join(tmpdir(), `mcp-yield-dist-${Buffer.from(root).toString("base64url").slice(-40)}.lock`);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Wait until this process holds dist/ (at most `timeoutMs`); `release()` gives it back. */
export async function holdDist(timeoutMs = 300_000): Promise<{ release(): Promise<void> }> {
  const started = Date.now();
  for (;;) {
    try {
      await mkdir(lock);
      await writeFile(join(lock, "pid"), String(process.pid));
      return { release: () => rm(lock, { recursive: true, force: true }) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const owner = Number(await readFile(join(lock, "pid"), "utf8").catch(() => ""));
    // A lock without a pid yet is being taken: only one that stays so (its taker died) is stale.
    if ((owner > 0 && !alive(owner)) || (owner === 0 && Date.now() - started > 10_000)) await rm(lock, { recursive: true, force: true });
    else if (Date.now() - started > timeoutMs) throw new Error(`dist/ is still held by process ${owner} after ${timeoutMs} ms (lock ${lock})`);
    else await new Promise((r) => setTimeout(r, 100));
  }
}
