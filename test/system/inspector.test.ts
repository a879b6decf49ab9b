import { textOf } from "../support/results.js";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startExampleServer } from "../../examples/app.js";
import { runtimeOrSkip } from "../../scripts/runtimes.js";
import { testKey } from "../support/keys.js";

// A real client nobody here wrote: MCP Inspector's headless client `mcpdo` (registry package
// @modelcontextprotocol/inspector, which needs Node ≥ 22.19 — run with the registry's Node 22)
// against the example server over HTTP, negotiating the 2026-07-28 ("modern") protocol. It answers
// an eliciting tool's three questions one command at a time, declines one, and answers a question
// asked inside a task. A private, token-gated daemon in a scratch HOME: nothing of the user's.

const run = promisify(execFile);
let server: RunningServer;
let mcpdo: ((...args: string[]) => Promise<Record<string, unknown> & { exitCode: number; stderr: string }>) | undefined;
const home = mkdtempSync(join(tmpdir(), "mcp-yield-inspector-"));

beforeAll(async () => {
  const [node, inspector] = [await runtimeOrSkip("node22"), await runtimeOrSkip("inspector")];
  if (node === undefined || inspector === undefined) return;
  server = await startExampleServer({ keys: [testKey("inspector", 9)] });
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, MCP_INSPECTOR_SECRET_STORE: "memory", NO_COLOR: "1" };
  // `mcpdo private` prints the shell exports of an isolated daemon for this test file.
  const exports = (await run(node, [inspector, "private"], { env })).stdout;
  for (const [, name, value] of exports.matchAll(/export (\w+)='([^']*)'/g)) env[name!] = value;
  expect(env.MCP_INSPECTOR_DAEMON_TOKEN, exports).toBeTruthy();
  // mcpdo prints its JSON on stdout and exits non-zero when a tool's result is an error: keep both.
  mcpdo = async (...args) => {
    const { stdout, stderr, code } = await run(node, [inspector, "--format", "json", ...args], { env, timeout: 30_000 }).then(
      (r) => ({ ...r, code: 0 }),
      (e: { stdout?: string; stderr?: string; code?: number; message: string }) => ({ stdout: e.stdout ?? "", stderr: `${e.message}\n${e.stderr ?? ""}`, code: e.code ?? -1 }),
    );
    try {
      return { ...(JSON.parse(stdout) as Record<string, unknown>), exitCode: code, stderr };
    } catch {
      throw new Error(`mcpdo ${args.join(" ")} (exit ${code}) printed no JSON:\n${stdout}\n${stderr}`);
    }
  };
  const connected = await mcpdo("connect", server.url, "--era", "modern");
  expect(connected.protocolEra).toBe("modern");
}, 180_000);

afterAll(async () => {
  await mcpdo?.("daemon", "stop").catch(() => undefined);
  await server?.close();
  rmSync(home, { recursive: true, force: true });
});

interface Pending {
  elicitationPending?: { elicitationId: string; message: string; origin: string; requestedSchema: { properties: Record<string, unknown> } };
  content?: Array<{ type: string; text?: string }>;
  isError?: boolean;
  exitCode: number;
  stderr: string;
}

describe("MCP Inspector's headless client (mcpdo) against the example server", () => {
  const call = async (tool: string, ...args: string[]) => (await mcpdo!("--connection", server.url, "tools/call", tool, ...args)) as Pending;
  const respond = async (pending: Pending, ...answer: string[]) => (await mcpdo!("elicitation/respond", pending.elicitationPending!.elicitationId, ...answer)) as Pending;

  it("answers plan_trip's three questions, one mcpdo command each", async ({ skip }) => {
    if (!mcpdo) skip();
    const first = await call("plan_trip");
    expect(first.elicitationPending).toMatchObject({ message: "What is your name?", origin: "input-required" });
    const second = await respond(first, "name:=Ada");
    expect(second.elicitationPending?.message).toBe("Where would you like to go, Ada?");
    const third = await respond(second, "destination:=Kyoto");
    expect(third.elicitationPending?.message).toBe("Plan a trip to Kyoto for Ada?");
    const done = await respond(third, "confirm:=true");
    expect(textOf(done, " "), done.stderr).toBe("Trip planned: Ada is going to Kyoto.");
    expect(done.exitCode).toBe(0);
  });

  it("a declined question ends the call as the tool says (an error result, not a protocol error)", async ({ skip }) => {
    if (!mcpdo) skip();
    const first = await call("plan_trip");
    const declined = await respond(first, "--decline");
    expect(declined.isError).toBe(true);
    expect(textOf(declined, " ")).toBe("Trip planning cancelled.");
    expect(declined.exitCode).not.toBe(0); // mcpdo exits 5 for a tool error result
    expect(declined.stderr).toContain("tool_is_error");
  });

  it("answers a question asked inside a task, and gets the task's result", async ({ skip }) => {
    if (!mcpdo) skip();
    const asked = await call("confirm_delete", "filename:=notes.txt");
    expect(asked.elicitationPending).toMatchObject({ message: "Delete notes.txt?", origin: "task-input-required" });
    const done = await respond(asked, "confirm:=true");
    expect(textOf(done, " "), done.stderr).toBe("Deleted notes.txt.");
    expect(done.exitCode).toBe(0);
  });
});
