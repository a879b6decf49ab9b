import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callWithInput, createFetchSender, type InputHandlers, type Send } from "mcp-yield/client";
import { contentFor } from "../../examples/answer-from-schema.js";
import { type RunningServer, startExampleServer } from "../../examples/app.js";
import { parseKeyRing } from "mcp-yield";
import { freePort, type Started, startProcess, stopProcess } from "../support/processes.js";
import { runtimeOrSkip } from "../../scripts/runtimes.js";
import { newKey } from "../../scripts/stress/cluster.js";
import { until } from "../support/instances.js";
import { textOf } from "../support/results.js";

// The examples in examples/edge/ started on Deno, Bun and Cloudflare's workerd (each the registry
// package's own binary, cached outside the repository), driven over real HTTP through a call of
// four requests (three questions, then the result) — and the same call alternating between that
// runtime and a Node instance with the same key ring, so a requestState minted on one is opened
// on the other in both directions. workerd runs twice: with today's compatibility date (Node's
// APIs built in) and without Node compatibility — the codec's portable path.

const root = fileURLToPath(new URL("../..", import.meta.url));
const keys = newKey("edge");
const answers: Record<string, Record<string, string | boolean>> = { name: { name: "Ada" }, destination: { destination: "Kyoto" }, confirm: { confirm: true } };
const handlers: InputHandlers = { elicit: (params, { key }) => (params.mode === "url" ? { action: "decline" } : { action: "accept", content: contentFor(params.requestedSchema, answers[key]) }) };

let node: RunningServer;
const scratch = mkdtempSync(join(tmpdir(), "mcp-yield-edge-"));
beforeAll(async () => {
  node = await startExampleServer({ keys: parseKeyRing(keys) });
});
afterAll(async () => {
  await node.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** A server's /mcp URL once it answers at all (for workerd, which prints nothing when it listens). */
async function answering(base: string, started: Started): Promise<string> {
  await until(
    async () =>
      (await fetch(`${base}/status`).then(
        (r) => r.ok,
        () => false,
      )) || undefined,
    30_000,
  ).catch((e: Error) => {
    throw new Error(`${e.message}; it printed:\n${started.output()}`);
  });
  return `${base}/mcp`;
}

let bundled: Promise<unknown> | undefined;

/**
 * The worker bundled as a Workers deploy bundles it (one ES module, workerd's export conditions),
 * and the example's config on `port`. Compatibility dates since 2026 give a worker Node's APIs
 * (node:crypto included); `no_nodejs_compat_v2` takes them away — the codec's portable path.
 */
async function workerdConfig(port: number, nodeCompat: boolean): Promise<string> {
  await (bundled ??= build({
    entryPoints: [join(root, "examples/edge/worker.ts")],
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    conditions: ["workerd", "worker", "browser", "mcp-yield-source"],
    mainFields: ["module", "main"],
    outfile: join(scratch, "worker.js"),
    logLevel: "error",
  }));
  const config = join(scratch, `workerd-${port}.capnp`);
  let text = readFileSync(join(root, "examples/edge/workerd.capnp"), "utf8").replace("127.0.0.1:8787", `127.0.0.1:${port}`);
  if (!nodeCompat) text = text.replace("  compatibilityDate =", '  compatibilityFlags = ["no_nodejs_compat_v2"],\n  compatibilityDate =');
  writeFileSync(config, text);
  return config;
}

const platforms = {
  deno: async (bin: string, port: number) => {
    const started = await startProcess(
      bin,
      ["run", "--conditions", "mcp-yield-source", "--unstable-sloppy-imports", "--allow-net=127.0.0.1", "--allow-env", "--allow-read", "--allow-sys", "examples/edge/deno.ts"],
      {
        cwd: root,
        env: { ...process.env, MCP_YIELD_KEYS: keys, PORT: String(port), NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
        ready: /at (http:\S+\/mcp)/,
        timeoutMs: 60_000,
        what: "deno",
      },
    );
    return { started, url: started.match[1]! };
  },
  bun: async (bin: string, port: number) => {
    const started = await startProcess(bin, ["--conditions=mcp-yield-source", "examples/edge/bun.ts"], {
      cwd: root,
      env: { ...process.env, MCP_YIELD_KEYS: keys, PORT: String(port) },
      ready: /at (http:\S+\/mcp)/,
      timeoutMs: 60_000,
      what: "bun",
    });
    return { started, url: started.match[1]! };
  },
  workerd: (bin: string, port: number) => startWorkerd(bin, port, true),
  "workerd without Node compatibility": (bin: string, port: number) => startWorkerd(bin, port, false),
} as const;
const binaryOf = (platform: keyof typeof platforms) => (platform.startsWith("workerd") ? "workerd" : (platform as "deno" | "bun"));
/** Which crypto the codec should find: node:crypto everywhere but workerd without Node compatibility. */
const expectedCrypto = (platform: keyof typeof platforms) => (platform === "workerd without Node compatibility" ? "portable" : "node");

async function startWorkerd(bin: string, port: number, nodeCompat: boolean) {
  const config = await workerdConfig(port, nodeCompat);
  const started = await startProcess(bin, ["serve", config, "--verbose"], { cwd: scratch, env: { ...process.env, MCP_YIELD_KEYS: keys }, ready: "spawned", what: "workerd" });
  return { started, url: await answering(`http://127.0.0.1:${port}`, started) };
}

describe.each(Object.keys(platforms) as Array<keyof typeof platforms>)("the edge example on %s", (platform) => {
  let server: { started: Started; url: string } | undefined;
  let skipped = false;
  beforeAll(async () => {
    const bin = await runtimeOrSkip(binaryOf(platform));
    if (bin === undefined) return void (skipped = true);
    server = await platforms[platform](bin, await freePort());
  }, 180_000);
  afterAll(() => stopProcess(server?.started.child));

  it("serves a generator call of three questions over HTTP, with the crypto the platform has", async ({ skip }) => {
    if (skipped) skip();
    const status = (await (await fetch(server!.url.replace(/\/mcp$/, "/status"))).json()) as { crypto: string };
    expect(status.crypto).toBe(expectedCrypto(platform));
    const rounds: number[] = [];
    const result = await callWithInput<{ content: Array<{ type: string; text?: string }> }>(
      createFetchSender(server!.url, { capabilities: { elicitation: {} } }),
      "tools/call",
      { name: "plan_trip", arguments: {} },
      handlers,
      {
        onRound: (r) => rounds.push(r.round),
      },
    );
    expect(textOf(result, " ")).toBe("Trip planned: Ada is going to Kyoto.");
    expect(rounds).toEqual([1, 2, 3]);
  });

  it("a call's rounds alternate between it and Node: each opens the other's requestState", async ({ skip }) => {
    if (skipped) skip();
    const served: string[] = [];
    const senders = [
      ["edge", createFetchSender(server!.url, { capabilities: { elicitation: {} } })],
      ["node", createFetchSender(node.url, { capabilities: { elicitation: {} } })],
    ] as const;
    const send: Send = (method, params) => {
      const [where, sender] = senders[served.length % 2]!;
      served.push(where);
      return sender(method, params);
    };
    const result = await callWithInput<{ content: Array<{ type: string; text?: string }> }>(send, "tools/call", { name: "plan_trip", arguments: {} }, handlers);
    expect(textOf(result, " ")).toBe("Trip planned: Ada is going to Kyoto.");
    expect(served).toEqual(["edge", "node", "edge", "node"]);
  });

  it("answers a tampered requestState with -32602 bad_signature, and an unknown path with 404", async ({ skip }) => {
    if (skipped) skip();
    const send = createFetchSender(server!.url, { capabilities: { elicitation: {} } });
    const first = (await send("tools/call", { name: "plan_trip", arguments: {} })) as { requestState: string };
    await expect(
      send("tools/call", { name: "plan_trip", arguments: {}, requestState: `${first.requestState}x`, inputResponses: { name: { action: "accept", content: { name: "Ada" } } } }),
    ).rejects.toMatchObject({
      reason: "rpc_error",
      rpc: { code: -32602, data: { reason: "bad_signature" } },
    });
    expect((await fetch(server!.url.replace(/\/mcp$/, "/nothing-here"))).status).toBe(404);
  });
});
