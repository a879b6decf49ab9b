import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUuid } from "../../src/internal.js";

// Issue 9.6: no IV, nonce or call id may repeat across processes cloned from one V8 startup
// snapshot. Tested with a real snapshot: the pool module is built into a snapshot after it has
// handed out bytes, then two processes are started from that snapshot.

const run = promisify(execFile);
const source = fileURLToPath(new URL("../../src/state/random.ts", import.meta.url));
let dir: string;
let blob: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcp-yield-snapshot-"));
  // random.ts imports nothing: compiled alone to CommonJS it is a script a snapshot can hold.
  const tsc = fileURLToPath(new URL("../../node_modules/typescript/bin/tsc", import.meta.url));
  await run(process.execPath, [tsc, source, "--module", "commonjs", "--target", "es2022", "--types", "node", "--skipLibCheck", "--ignoreConfig", "--outDir", dir], { timeout: 60_000 });
  const module = await readFile(join(dir, "random.js"), "utf8");
  const entry = `
const random = (() => { const module = { exports: {} }; const exports = module.exports; ${module}; return module.exports; })();
const crypto = require("node:crypto");
// A control: the same pool with no process guard, as a heap-resident cache would behave.
const naive = random.pooledRandom((b) => crypto.randomFillSync(b), () => 0);
// Use both before the snapshot is taken, so their pools hold bytes not yet handed out.
random.randomBytes(12); random.randomUuid(); naive.bytes(12);
const hex = (b) => Buffer.from(b).toString("hex");
require("node:v8").startupSnapshot.setDeserializeMainFunction(() => {
  console.log(JSON.stringify({ iv: hex(random.randomBytes(12)), uuid: random.randomUuid(), naive: hex(naive.bytes(12)) }));
});
`;
  await writeFile(join(dir, "entry.js"), entry);
  blob = join(dir, "snapshot.blob");
  await run(process.execPath, ["--snapshot-blob", blob, "--build-snapshot", join(dir, "entry.js")], { cwd: dir, timeout: 60_000 });
}, 90_000);
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("randomness across processes started from one snapshot", () => {
  it("IVs and ids differ between the processes; a heap-resident pool without the guard would repeat", async () => {
    const start = async () => JSON.parse((await run(process.execPath, ["--snapshot-blob", blob], { cwd: dir, timeout: 30_000 })).stdout) as { iv: string; uuid: string; naive: string };
    const [a, b] = await Promise.all([start(), start()]);
    // The positive control: the snapshot really does copy the pool's bytes into both processes.
    expect(a.naive).toBe(b.naive);
    expect(a.iv).not.toBe(b.iv);
    expect(a.uuid).not.toBe(b.uuid);
  }, 60_000);

  it("ids are version 4 UUIDs and do not repeat in one process", () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => randomUuid()));
    expect(ids.size).toBe(10_000);
    for (const id of [...ids].slice(0, 100)) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
