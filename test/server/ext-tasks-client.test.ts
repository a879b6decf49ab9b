import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient } from "@modelcontextprotocol/ext-tasks/client";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callWithInput, createTaskDispatch, sdkSender } from "mcp-yield/client";
import { type RunningServer, startExampleServer } from "../../examples/app.js";
import { testKey } from "../support/keys.js";

// Issue 56, point 5: following tasks with the official client. Its codecs refuse a tools/call
// answered with a task ("Unsupported result type 'task'"); @modelcontextprotocol/ext-tasks
// follows tasks given a raw dispatch for 2026-07-28 traffic — createTaskDispatch is that
// dispatch: every request with the Mcp-Method / Mcp-Name / MCP-Protocol-Version headers the
// stateless server routes by. Against the example server over real HTTP.

let server: RunningServer;
beforeAll(async () => {
  server = await startExampleServer({ keys: [testKey("ext", 6)], onError: () => {} });
});
afterAll(() => server.close());

const capabilities = { elicitation: {}, extensions: { "io.modelcontextprotocol/tasks": {} } };
type Sent = { method: string; mcpMethod: string | null; mcpName: string | null; version: string | null };

async function session(sent: Sent[], answer: (message: string) => Record<string, unknown>) {
  const client = new Client({ name: "ext-client", version: "1.0.0" }, { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: "2026-07-28" } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  // A fetch that notes what each request carried.
  const recording: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    sent.push({
      method: (JSON.parse(String(init?.body)) as { method: string }).method,
      mcpMethod: headers.get("mcp-method"),
      mcpName: headers.get("mcp-name"),
      version: headers.get("mcp-protocol-version"),
    });
    return fetch(input, init);
  };
  const tasks = createTaskSessionFromClient(client, {
    endpointId: server.url,
    ...createTaskDispatch(server.url, { capabilities, fetch: recording }),
    onInputRequest: async (request) => {
      if (request.kind !== "elicitation") throw new Error(`unexpected ${request.kind}`);
      return { action: "accept", content: answer(String(request.params.message)) } as never;
    },
  });
  return { client, tasks };
}

describe("following tasks through the official client and ext-tasks", () => {
  it("the official client alone cannot: a task result is refused", async () => {
    const client = new Client({ name: "c", version: "1" }, { capabilities: capabilities as never, versionNegotiation: { mode: { pin: "2026-07-28" } }, inputRequired: { autoFulfill: false } });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    try {
      await expect(callWithInput(sdkSender(client), "tools/call", { name: "slow_compute", arguments: { seconds: 0.1 } }, {})).rejects.toThrow(/Unsupported result type 'task'/);
    } finally {
      await client.close();
    }
  });

  it("a task asked for input over plain rounds, then run, completes; every request carried the routing headers", async () => {
    const sent: Sent[] = [];
    const { client, tasks } = await session(sent, () => ({ format: "pdf", pages: 3, confirm: true }));
    try {
      const execution = await tasks.callTool("generate_report", { topic: "Q3" });
      expect(execution.kind).toBe("task");
      const outcome = await execution.result();
      expect(outcome).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: expect.stringMatching(/^Report on "Q3": \d+ pages, https:\/\/reports\.example\/\S+\.pdf$/) }] } });
    } finally {
      await tasks.close();
      await client.close();
    }
    expect(sent.map((s) => s.method)).toEqual(expect.arrayContaining(["tools/call", "tasks/get"]));
    for (const s of sent) {
      expect(s.mcpMethod).toBe(s.method);
      expect(s.version).toBe("2026-07-28");
      expect(s.mcpName).not.toBeNull(); // the tool's name, or the task's id
    }
  });

  it("a task that asks inside itself (tasks/update) completes with the answer; a declined one is kept", async () => {
    const sent: Sent[] = [];
    let confirm = true;
    const { client, tasks } = await session(sent, () => ({ confirm }));
    try {
      const deleted = await (await tasks.callTool("confirm_delete", { filename: "a.txt" })).result();
      expect(deleted).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: "Deleted a.txt." }] } });
      expect(sent.some((s) => s.method === "tasks/update")).toBe(true);
      confirm = false;
      const kept = await (await tasks.callTool("confirm_delete", { filename: "b.txt" })).result();
      expect(kept).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: "Kept b.txt." }] } });
    } finally {
      await tasks.close();
      await client.close();
    }
  });

  it("the README's snippet follows confirm_delete to its end", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ["--conditions=mcp-yield-source", "--import", "tsx", "examples/readme/official-client-tasks.ts"], {
      cwd: fileURLToPath(new URL("../..", import.meta.url)),
      env: { ...process.env, MCP_URL: server.url },
      timeout: 30_000,
    });
    expect(stdout).toContain("Deleted notes.txt.");
  }, 60_000);

  it("a JSON-RPC error is answered as one, not thrown as a transport failure", async () => {
    const { rawDispatch } = createTaskDispatch(server.url, { capabilities });
    expect(await rawDispatch({ method: "tasks/get", params: { taskId: "no-such-task" } })).toMatchObject({ kind: "error", error: { code: -32602 } });
    await expect(rawDispatch("tasks/get")).rejects.toThrow("a request is an object with a method");
  });
});
