import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startExampleServer } from "../../examples/app.js";
import { testKey } from "../support/keys.js";

// The interactive terminal client (`npm run client`) with its answers piped in, one per line, as
// the README documents: the tool's number, its arguments, then per question Enter (or d / c)
// and one line per field.

const root = fileURLToPath(new URL("../..", import.meta.url));
let server: RunningServer;
beforeAll(async () => {
  server = await startExampleServer({ keys: [testKey("terminal", 5)] });
});
afterAll(() => server.close());

function client(input: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, ["--conditions=mcp-yield-source", "--import", "tsx", "examples/client.ts", server.url], { cwd: root, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin!.end(input);
  });
}

describe("the terminal client, answers piped in", () => {
  it("answers plan_trip's three questions from the lines given, re-asking a field whose line is not a valid answer", async () => {
    // 2 = plan_trip; Enter, name; Enter, an invalid destination then a valid one; Enter, y.
    const run = await client("2\n\nAda\n\nOsaka\nKyoto\n\ny\n");
    expect(run.stdout, run.stderr).toContain("Result: Trip planned: Ada is going to Kyoto.");
    expect(run.stdout).toContain("(not a valid answer, try again)");
    expect(run.code).toBe(0);
  });

  it("a declined question ends the call as the tool says; answers that run out end the client with exit code 1", async () => {
    const declined = await client("2\nd\n");
    expect(declined.stdout).toContain("Error: Trip planning cancelled.");
    const short = await client("2\n\nAda\n");
    expect(short.code).toBe(1);
    expect(short.stderr).toContain("Failed: no more input (the answers ran out)");
  });
});
