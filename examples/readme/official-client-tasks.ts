import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createApplicationInputHandler, createTaskSessionFromClient } from "@modelcontextprotocol/ext-tasks/client";
import { createTaskDispatch } from "mcp-yield/client";

const url = process.env.MCP_URL ?? "http://127.0.0.1:3000/mcp";
const client = new Client({ name: "my-app", version: "1.0.0" }, { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: "2026-07-28" } } });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const tasks = createTaskSessionFromClient(client, {
  endpointId: url,
  ...createTaskDispatch(url, { capabilities: { elicitation: {}, extensions: { "io.modelcontextprotocol/tasks": {} } } }),
  onInputRequest: createApplicationInputHandler({
    elicitation: (request) => ({ action: "accept", content: { confirm: String(request.params.message).startsWith("Delete") } }),
    sampling: () => Promise.reject(new Error("no sampling here")),
    roots: () => ({ roots: [] }),
  }),
});
const outcome = await (await tasks.callTool("confirm_delete", { filename: "notes.txt" })).result();
console.log(outcome.status === "completed" ? outcome.result : outcome);
await tasks.close();
await client.close();
