import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createRuntime, elicit, parseKeyRing, tool as defineTool } from "mcp-yield";
import { createPostgresStore } from "mcp-yield/postgres";
import { dropSchema, POSTGRES_URL, postgresAvailable, testSchema } from "../support/postgres.js";
import { holdDist } from "../support/dist-lock.js";

// The package as a user gets it: `npm pack` (prepack builds), installed into a fresh strict
// TypeScript project that has another zod 4.x than ours, no @modelcontextprotocol/client, and
// skipLibCheck off. It must type-check (NodeNext ESM and CommonJS, bundler resolution; our
// TypeScript and 5.9) and complete calls.

const run = promisify(execFile);
const root = fileURLToPath(new URL("../..", import.meta.url));
/** The lowest zod the peer range allows (4.0.x fails: its ZodDiscriminatedUnion takes one type argument). */
export const LOWEST_ZOD = process.env.MCP_YIELD_TEST_ZOD ?? "4.1.0";
/** The lowest pg the optional peer range allows. */
const LOWEST_PG = "8.11.0";
let dir: string;

const tool = `
const Confirm = z.object({ confirm: z.boolean().describe("Book it?") });
export const bookFlight = tool({
  name: "book_flight",
  description: "Book a flight after the user confirms",
  input: z.object({ destination: z.string() }),
  output: z.object({ booked: z.boolean(), destination: z.string() }),
  async *run({ destination }, ctx) {
    const draft = yield* step("draft", () => ({ price: 120 }));
    const answer: ElicitOutcome<{ confirm: boolean }> = yield* elicit(\`Book \${destination} for $\${draft.price}?\`, Confirm, { key: "confirm" });
    const ok = answer.action === "accept" && answer.content.confirm;
    if (ok) yield* step("charge", () => ctx.idempotencyKey("charge"));
    return { booked: ok, destination };
  },
});`;

const files: Record<string, string> = {
  "package.json": JSON.stringify({ name: "consumer", private: true, type: "module" }),
  // ESM, NodeNext: the runtime, the testing harness and the client loop (its SDK peer absent).
  "src/esm.mts": `import { type ElicitOutcome, elicit, step, tool } from "mcp-yield";
import { accept, simulate } from "mcp-yield/testing";
import { callWithInput, createFetchSender } from "mcp-yield/client";
import { z } from "zod";
${tool}
void callWithInput; void createFetchSender;
const sim = await simulate(bookFlight, { destination: "Lisbon" }, { confirm: accept({ confirm: true }) });
const text: string = String(sim.result.content[0]?.text);
console.log(JSON.stringify({ esm: text, structured: sim.result.structuredContent }));
`,
  // CommonJS: require() of the ESM package (Node ≥ 20.19).
  "src/cjs.cts": `import { createRuntime, elicit, step, tool, type ElicitOutcome } from "mcp-yield";
import { z } from "zod";
${tool}
async function main() {
  const runtime = createRuntime({ state: { keys: [{ id: "k", secret: new Uint8Array(32).fill(1) }] } });
  const r1 = await runtime.callTool(bookFlight, { name: "book_flight", arguments: { destination: "Rome" } }, { clientCapabilities: { elicitation: {} } });
  if (r1.resultType !== "input_required") throw new Error("expected a question");
  const r2 = await runtime.callTool(bookFlight, { name: "book_flight", arguments: { destination: "Rome" }, requestState: r1.requestState, inputResponses: { confirm: { action: "accept", content: { confirm: true } } } }, { clientCapabilities: { elicitation: {} } });
  console.log(JSON.stringify({ cjs: r2.resultType === "complete" ? r2.structuredContent : r2 }));
}
void main();
`,
  // The SDK adapter, served through the SDK's own handler.
  "src/server.mts": `import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { createMemoryStore, createRuntime, elicit, step, tool, type ElicitOutcome } from "mcp-yield";
import { register } from "mcp-yield/server";
import { z } from "zod";
${tool}
const runtime = createRuntime({ state: { keys: [{ id: "k", secret: new Uint8Array(32).fill(2) }] }, store: createMemoryStore(), onError: (e) => console.error(e) });
const app = createMcpHandler(() => {
  const server = new McpServer({ name: "consumer", version: "1.0.0" });
  register(server, [bookFlight], { runtime });
  return server;
});
const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientInfo": { name: "c", version: "1" }, "io.modelcontextprotocol/clientCapabilities": { elicitation: {} } };
const post = async (params: Record<string, unknown>) => (await (await app.fetch(new Request("http://x/mcp", { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "book_flight" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { ...params, _meta: meta } }) }))).json()) as { result: { requestState?: string; structuredContent?: unknown } };
const first = await post({ name: "book_flight", arguments: { destination: "Oslo" } });
const done = await post({ name: "book_flight", arguments: { destination: "Oslo" }, requestState: first.result.requestState, inputResponses: { confirm: { action: "accept", content: { confirm: true } } } });
console.log(JSON.stringify({ server: done.result.structuredContent }));
`,
  "src/bundler.ts": `import { elicit, step, tool, type ElicitOutcome } from "mcp-yield";
import { simulate } from "mcp-yield/testing";
import { z } from "zod";
${tool}
export const check: Promise<unknown> = simulate(bookFlight, { destination: "x" }, {});
`,
  // The SDK's own declarations need Node's types; ours need none (the bundler project has none).
  // exactOptionalPropertyTypes: the strictest setting a user's project may have.
  "tsconfig.json": JSON.stringify({
    compilerOptions: {
      target: "es2022",
      module: "nodenext",
      moduleResolution: "nodenext",
      strict: true,
      exactOptionalPropertyTypes: true,
      skipLibCheck: false,
      outDir: "build",
      rootDir: "src",
      types: ["node"],
    },
    files: ["src/esm.mts", "src/cjs.cts", "src/server.mts", "src/readme/serve.mts"],
  }),
  "tsconfig.bundler.json": JSON.stringify({
    compilerOptions: { target: "es2022", module: "esnext", moduleResolution: "bundler", strict: true, exactOptionalPropertyTypes: true, skipLibCheck: false, noEmit: true, types: [] },
    files: ["src/bundler.ts"],
  }),
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcp-yield-consumer-"));
  // Built, then packed without prepack's API reference (test/system/api-docs.test.ts builds and checks
  // that; it adds only markdown under dist/docs, which nothing here reads).
  // dist/ held meanwhile: the API reference test builds into it too.
  const dist = await holdDist();
  try {
    await run("npm", ["run", "build"], { cwd: root, timeout: 120_000 });
    await run("npm", ["pack", "--ignore-scripts", "--pack-destination", dir], { cwd: root, timeout: 120_000 });
  } finally {
    await dist.release();
  }
  const tarball = (await readdir(dir)).find((f) => f.endsWith(".tgz"))!;
  // The README's quickstart and serve snippets, as a user pastes them into an ESM project.
  for (const snippet of ["quickstart", "serve"]) {
    const text = (await readFile(join(root, "examples/readme", `${snippet}.ts`), "utf8")).replace('"./quickstart.js"', '"./quickstart.mjs"');
    files[`src/readme/${snippet}.mts`] = text;
  }
  for (const [name, text] of Object.entries(files)) {
    await run("mkdir", ["-p", join(dir, name, "..")]);
    await writeFile(join(dir, name), text);
  }
  // pg at the lowest version the optional peer range allows: the installed CLI's tasks commands load it.
  await run(
    "npm",
    [
      "install",
      "--no-audit",
      "--no-fund",
      join(dir, tarball),
      `zod@${LOWEST_ZOD}`,
      "@modelcontextprotocol/server@2.4.0",
      "@modelcontextprotocol/node@2.1.2",
      "typescript@5.9.3",
      "@types/node@20",
      `pg@${LOWEST_PG}`,
    ],
    { cwd: dir, timeout: 240_000 },
  );
}, 300_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const tsc7 = join(root, "node_modules/typescript/bin/tsc");
const tsc5 = () => join(dir, "node_modules/typescript/bin/tsc");

describe("the packed package in a fresh strict TypeScript project", () => {
  it("installs with another zod 4.x, without the client SDK, and ships what it needs", async () => {
    const { stdout } = await run("npm", ["ls", "zod", "@modelcontextprotocol/client", "--all", "--json"], { cwd: dir }).catch((e: { stdout: string }) => e);
    const tree = JSON.stringify(JSON.parse(stdout));
    expect(tree).toContain(`"zod":{"version":"${LOWEST_ZOD}"`);
    expect(tree).not.toContain('"@modelcontextprotocol/client"');
    const shipped = await readdir(join(dir, "node_modules/mcp-yield"));
    expect(shipped).toEqual(expect.arrayContaining(["dist", "examples", "LICENSE", "README.md", "package.json"]));
    // The examples teach from the package (issue 56 point 8): the server, its tools, the edge
    // runtimes' entries — importing the package by name, as a user's code does.
    const examples = await readdir(join(dir, "node_modules/mcp-yield/examples"), { recursive: true });
    expect(examples).toEqual(expect.arrayContaining(["server.ts", "client.ts", "demo.ts", join("tools", "durable.ts"), join("edge", "worker.ts")]));
    for (const file of examples.filter((f) => f.endsWith(".ts"))) expect(await readFile(join(dir, "node_modules/mcp-yield/examples", file), "utf8")).not.toMatch(/from "\.\.\/(\.\.\/)?src\//);
  });

  it.each([
    ["TypeScript 7", () => tsc7],
    ["TypeScript 5.9", tsc5],
  ])(
    "type-checks NodeNext (ESM and CommonJS) and bundler resolution with %s",
    async (_name, tsc) => {
      for (const project of ["tsconfig.json", "tsconfig.bundler.json"]) {
        const out = await run(process.execPath, [tsc(), "-p", project, "--noEmit"], { cwd: dir }).then(
          () => "",
          (e: { stdout: string }) => e.stdout,
        );
        expect(out, project).toBe("");
      }
    },
    120_000,
  );

  it("the CLI works as installed: npx mcp-yield keygen and inspect, through npm's bin symlink", async () => {
    const npx = (args: string[], env: Record<string, string> = {}) => run("npx", ["--no-install", "mcp-yield", ...args], { cwd: dir, env: { ...process.env, ...env }, timeout: 60_000 });
    const { stdout: ring } = await npx(["keygen"]);
    expect(ring.trim()).toMatch(/^k\d{8}-[A-Za-z0-9_-]{6}:[A-Za-z0-9_-]{43}$/);
    const { stdout: again } = await npx(["keygen"]);
    expect(again.split(":")[0]).not.toBe(ring.split(":")[0]); // two keys the same day: two ids
    // A real round's state, made with that key ring, opened by the installed CLI.
    const ask = defineTool({
      name: "ask",
      description: "",
      input: z.object({}),
      async *run() {
        return (yield* elicit("Go?", z.object({ ok: z.boolean() }), { key: "go" })).action;
      },
    });
    const runtime = createRuntime({ state: { keys: parseKeyRing(ring.trim()) } });
    const first = (await runtime.callTool(ask, { name: "ask", arguments: {} }, { clientCapabilities: { elicitation: {} } })) as { requestState: string };
    const { stdout: report } = await npx(["inspect", first.requestState, "--json"], { MCP_YIELD_KEYS: ring.trim() });
    expect(JSON.parse(report)).toMatchObject({ binding: { target: "ask" }, round: 1, expired: false });
    // The same state saved as a fixture by the installed CLI.
    const { stdout: fixture } = await npx(["export", first.requestState], { MCP_YIELD_KEYS: ring.trim() });
    expect(JSON.parse(fixture)).toMatchObject({ format: "mcp-yield/journal-fixture", tool: "ask", end: { at: "ask" } });
  }, 120_000);

  it.skipIf(!postgresAvailable)(
    `npx mcp-yield tasks list and show on PostgreSQL, with pg ${LOWEST_PG} (the optional peer) installed`,
    async () => {
      const schema = testSchema("package");
      const store = await createPostgresStore({ connectionString: POSTGRES_URL, schema });
      const runtime = createRuntime({ state: { keys: parseKeyRing("p:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA") }, store, onError: () => {} });
      try {
        const wait = defineTool({
          name: "wait",
          description: "",
          input: z.object({}),
          task: "required",
          async *run() {
            return (yield* elicit("Go?", z.object({ ok: z.boolean() }), { key: "go" })).action;
          },
        });
        runtime.define([wait]);
        const { taskId } = (await runtime.callTool(wait, { name: "wait", arguments: {} }, { clientCapabilities: { elicitation: {}, extensions: { "io.modelcontextprotocol/tasks": {} } } })) as {
          taskId: string;
        };
        const flags = ["--postgres", POSTGRES_URL, "--postgres-schema", schema];
        const listed = await run("npx", ["--no-install", "mcp-yield", "tasks", "list", "--json", ...flags], { cwd: dir, timeout: 60_000 });
        expect(JSON.parse(listed.stdout).tasks).toEqual([expect.objectContaining({ taskId, tool: "wait" })]);
        const shown = await run("npx", ["--no-install", "mcp-yield", "tasks", "show", taskId, ...flags], { cwd: dir, timeout: 60_000 });
        expect(shown.stdout).toContain(`task ${taskId}: `);
      } finally {
        await runtime.close();
        await store.close();
        await dropSchema(schema);
      }
    },
    120_000,
  );

  it("runs: ESM, CommonJS (require of the ESM package) and through the SDK", async () => {
    await run(process.execPath, [tsc7, "-p", "tsconfig.json"], { cwd: dir });
    const outputs = await Promise.all(
      ["build/esm.mjs", "build/cjs.cjs", "build/server.mjs"].map(async (f) => JSON.parse((await run(process.execPath, [f], { cwd: dir })).stdout) as Record<string, unknown>),
    );
    expect(outputs).toEqual([
      { esm: '{"booked":true,"destination":"Lisbon"}', structured: { booked: true, destination: "Lisbon" } },
      { cjs: { booked: true, destination: "Rome" } },
      { server: { booked: true, destination: "Oslo" } },
    ]);
  }, 120_000);
});
