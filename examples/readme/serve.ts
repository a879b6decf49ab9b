import { createServer, type RequestListener } from "node:http";
import { toNodeHandler } from "@modelcontextprotocol/node";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { createMemoryStore, createRuntime, parseKeyRing } from "mcp-yield";
import { register, withTaskStatus } from "mcp-yield/server";
import { bookFlight } from "./quickstart.js";

// Development only. In production every instance gets the same MCP_YIELD_KEYS: `npx mcp-yield keygen`.
const DEV_KEYS = "dev:bWNwLXlpZWxkIGRldmVsb3BtZW50IGtleTogbmV2ZXIgdXNlIGl0IGluIHByb2R1Y3Rpb24";

const runtime = createRuntime({
  state: { keys: parseKeyRing(process.env.MCP_YIELD_KEYS ?? DEV_KEYS) },
  store: createMemoryStore(), // single-use states and tasks; createRedisStore() for several instances
  onError: (error, { method, target, round }) => console.error(`[mcp-yield] ${method} ${target} round ${round}:`, error),
});
const sdkHandler = createMcpHandler(() => {
  const server = new McpServer({ name: "travel", version: "1.0.0" });
  register(server, [bookFlight], { runtime }); // tools, prompts and resources
  return server;
});
const handler = withTaskStatus(sdkHandler, runtime); // pushes task status to clients that listen
// The cast: the SDK types Node's request loosely, which exactOptionalPropertyTypes refuses.
const listener = toNodeHandler(handler) as RequestListener;
export const http = createServer(listener).listen(Number(process.env.PORT ?? 3000), "127.0.0.1");
