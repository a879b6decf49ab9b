import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createApplicationInputHandler, createTaskSessionFromClient, type JsonRpcResponse, resultFromTaskOutcome } from "@modelcontextprotocol/ext-tasks/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callWithInput, ClientError, createFetchSender, type InputHandlers } from "mcp-yield/client";
import { type RunningServer, startExampleServer } from "../../examples/app.js";
import { contentFor } from "../../examples/answer-from-schema.js";
import { testKey } from "../support/keys.js";

// The example task tools over real HTTP: followed by mcp-yield's client loop, and completed by
// the official requester (@modelcontextprotocol/ext-tasks, what the MCP Inspector v2 builds on).

const TASKS = { "io.modelcontextprotocol/tasks": {} };
let server: RunningServer;
beforeAll(async () => {
  server = await startExampleServer({ keys: [testKey("t", 3)], onError: () => {} });
});
afterAll(() => server?.close());

const scripted: Record<string, Record<string, string | boolean>> = {
  user_name: { name: "Alice" },
  name: { name: "Ada" },
  confirm: { confirm: true },
  proceed: { confirm: true },
  options: { format: "html", confirm: true },
};
const handlers: InputHandlers = {
  elicit: (params, { key }) => (params.mode === "url" ? { action: "accept" } : { action: "accept", content: contentFor(params.requestedSchema, scripted[key]) }),
};
const text = (r: { content?: Array<{ text?: string }> }) => (r.content ?? []).map((c) => c.text).join(" ");

/** Every example tool that runs as a task, with arguments and what its final text says. */
const taskCalls: Array<[string, Record<string, unknown>, RegExp]> = [
  ["slow_compute", { seconds: 0.2, label: "quick" }, /^Computed "quick" in 0.2s$/],
  ["confirm_delete", { filename: "notes.txt" }, /^Deleted notes\.txt\.$/],
  ["multi_input", {}, /^Name: Ada; proceed: true$/],
  ["test_tool_with_task", {}, /^Hello, Alice! \(prepared as a task\)$/],
  ["generate_report", { topic: "tides" }, /^Report on "tides": \d+ pages, https:\/\/reports\.example\/[\w-]+\.html$/],
];

describe("mcp-yield/client follows tasks", () => {
  const send = () => createFetchSender(server.url, { capabilities: { elicitation: {}, extensions: TASKS } });

  it.each(taskCalls)(
    "%s completes as a task, input answered through tasks/update",
    async (name, args, expected) => {
      const statuses: string[] = [];
      const result = await callWithInput<{ content: Array<{ text: string }> }>(send(), "tools/call", { name, arguments: args }, handlers, { onTask: (t) => statuses.push(t.status) });
      expect(text(result)).toMatch(expected);
      expect(statuses.at(-1)).toBe("completed");
    },
    20_000,
  );

  it("a tool error completes with isError; a protocol error throws task_failed with the server's error", async () => {
    const failing = await callWithInput<{ isError?: boolean }>(send(), "tools/call", { name: "failing_job", arguments: {} }, handlers);
    expect(failing.isError).toBe(true);
    const error = await callWithInput(send(), "tools/call", { name: "protocol_error_job", arguments: {} }, handlers).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClientError);
    expect(error).toMatchObject({ reason: "task_failed", rpc: { code: -32603, data: { reason: "job_crashed" } } });
  }, 20_000);

  it("aborting the call cancels the task on the server", async () => {
    const controller = new AbortController();
    let taskId: string | undefined;
    const pending = callWithInput(send(), "tools/call", { name: "slow_compute", arguments: { seconds: 60 } }, handlers, {
      signal: controller.signal,
      onTask: (t) => {
        taskId = t.taskId;
        controller.abort();
      },
    });
    await expect(pending).rejects.toMatchObject({ reason: "aborted" });
    const status = await send()("tasks/get", { taskId });
    expect(status).toMatchObject({ status: "cancelled" });
  }, 20_000);

  it("declares the extension only when asked: without it a task-optional tool answers in the foreground and a task-required one is refused", async () => {
    const plain = createFetchSender(server.url, { capabilities: { elicitation: {} } });
    expect(text((await callWithInput(plain, "tools/call", { name: "slow_compute", arguments: { seconds: 0 } }, handlers)) as never)).toBe("Computed in 0s");
    await expect(callWithInput(plain, "tools/call", { name: "failing_job", arguments: {} }, handlers)).rejects.toMatchObject({ reason: "rpc_error", rpc: { code: -32021 } });
  });
});

describe("the official requester (ext-tasks) completes every example task tool", () => {
  let nextId = 1;
  /** The host's raw request path for 2026-07-28 task traffic: a POST with the routing headers. */
  async function rawDispatch(request: unknown, options?: { context?: { headers?: Readonly<Record<string, string>> } }): Promise<JsonRpcResponse> {
    const body = { jsonrpc: "2.0", id: nextId++, ...(request as Record<string, unknown>) } as unknown as { method: string; params?: { name?: string; uri?: string } };
    const name = body.params?.name ?? body.params?.uri;
    const response = await fetch(server.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": body.method,
        ...(name !== undefined ? { "mcp-name": name } : {}),
        ...options?.context?.headers,
      },
      body: JSON.stringify(body),
    });
    const raw = (await response.text()).trim();
    const json = JSON.parse(
      raw.startsWith("{")
        ? raw
        : raw
            .split("\n")
            .filter((l) => l.startsWith("data:"))
            .map((l) => l.slice(5))
            .join(""),
    ) as { result?: unknown; error?: { code: number; message: string; data?: unknown } };
    return json.error ? { kind: "error", error: json.error as never } : { kind: "result", result: json.result as never };
  }

  async function session() {
    const client = new Client({ name: "requester", version: "1.0.0" }, { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: "2026-07-28" } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    const input = createApplicationInputHandler({
      elicitation: async (request, context) => {
        const params = request.params as { requestedSchema: never; message: string };
        const key = params.message.includes("name")
          ? context.scope === "request"
            ? "user_name"
            : "name"
          : params.message.startsWith("Generate")
            ? "options"
            : params.message.startsWith("Proceed")
              ? "proceed"
              : "confirm";
        return { action: "accept", content: contentFor(params.requestedSchema, scripted[key]) as never };
      },
      sampling: async () => ({ role: "assistant", content: { type: "text", text: "x" }, model: "m" }),
      roots: async () => ({ roots: [] }),
    });
    const tasks = createTaskSessionFromClient(client, {
      endpointId: "mcp-yield-example",
      rawDispatch,
      v2RequestFraming: { protocolVersion: "2026-07-28", clientInfo: { name: "requester", version: "1.0.0" }, clientCapabilities: { elicitation: {} } },
      onInputRequest: input,
    });
    return { tasks, client };
  }

  it.each(taskCalls)(
    "%s",
    async (name, args, expected) => {
      const { tasks, client } = await session();
      try {
        const execution = await tasks.callTool(name, args as never);
        const { outcome } = await execution.settle();
        const result = resultFromTaskOutcome(outcome) as { content: Array<{ text: string }> };
        expect(text(result)).toMatch(expected);
      } finally {
        await tasks.close();
        await client.close();
      }
    },
    20_000,
  );

  it("a tool error arrives as a completed result with isError (not as a failed outcome)", async () => {
    const { tasks, client } = await session();
    try {
      const { outcome } = await (await tasks.callTool("failing_job", {})).settle();
      expect(outcome.status).toBe("completed");
      expect((resultFromTaskOutcome(outcome) as { isError?: boolean }).isError).toBe(true);
    } finally {
      await tasks.close();
      await client.close();
    }
  }, 20_000);
});
