import { spawn } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { bounded } from "../../src/store/bounded.js";
import { StoreError } from "../../src/store/index.js";

/**
 * Block this thread (a GC pause, a starved CPU: no timer, no socket read runs meanwhile) for at
 * least `ms` and until `done()` — the reply is sent — so the test does not depend on how soon
 * the other process is scheduled.
 */
function stall(ms: number, done: () => boolean): void {
  const until = performance.now() + ms;
  const giveUp = performance.now() + 30_000;
  while ((performance.now() < until || !done()) && performance.now() < giveUp) {
    // busy
  }
}

describe("bounded store operations", () => {
  const closers: Array<() => void> = [];
  afterEach(() => {
    for (const close of closers.splice(0)) close();
  });

  it("an operation whose reply arrived while the process was not running succeeds, though its timer is due too", async () => {
    // A server in another process answers at once; this process then stalls past the timeout
    // before it reads the reply — the timer and the reply are both due in the same loop turn.
    // After each reply is written it leaves a marker file (sent-1, sent-2, ...).
    const dir = mkdtempSync(join(tmpdir(), "mcp-yield-bounded-"));
    const server = spawn(
      process.execPath,
      [
        "-e",
        `let n = 0; const fs = require("node:fs"); require("node:net").createServer((s) => s.on("data", () => s.write("pong", () => fs.writeFileSync(${JSON.stringify(dir)} + "/sent-" + ++n, "")))).listen(0, "127.0.0.1", function () { console.log(this.address().port); })`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    closers.push(() => server.kill());
    const port = Number(await new Promise<string>((resolve, reject) => server.stdout.once("data", (d: Buffer) => resolve(d.toString())).once("error", reject)));
    const client: Socket = connect(port, "127.0.0.1");
    closers.push(() => client.destroy());
    await new Promise<void>((resolve, reject) => client.once("connect", resolve).once("error", reject));
    for (let i = 0; i < 5; i++) {
      const reply = new Promise<string>((resolve) => client.once("data", (d: Buffer) => resolve(d.toString())));
      const op = bounded(reply, 50, "Test", "PING");
      client.write("ping");
      stall(100, () => existsSync(join(dir, `sent-${i + 1}`))); // the reply is sent; the 50 ms timer is overdue
      await expect(op).resolves.toBe("pong");
    }
  });

  it("an operation that is never answered fails with store_unavailable after its time", async () => {
    const started = performance.now();
    const error = await bounded(new Promise<never>(() => {}), 30, "Test", "GET").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).reason).toBe("store_unavailable");
    expect((error as StoreError).message).toBe("Test did not answer GET within 30 ms");
    expect(performance.now() - started).toBeGreaterThanOrEqual(29);
  });

  it("a failed operation is a store_unavailable naming the service and the operation, with its cause", async () => {
    const cause = new Error("ECONNRESET");
    const error = await bounded(Promise.reject(cause), 1000, "Redis", "SET").catch((e: unknown) => e);
    expect((error as StoreError).reason).toBe("store_unavailable");
    expect((error as StoreError).message).toBe("Redis failed SET: ECONNRESET");
    expect((error as StoreError).cause).toBe(cause);
  });
});
