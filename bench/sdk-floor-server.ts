// The SDK alone, for bench/http-tasks.ts's floor: a fresh McpServer per request with one plain
// tool (no mcp-yield), served by createMcpHandler through toNodeHandler as the example server
// is. Prints "listening on <url>" once it listens.
import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";
import { toNodeHandler } from "@modelcontextprotocol/node";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";

const handler = createMcpHandler(() => {
  const server = new McpServer({ name: "sdk-floor", version: "1.0.0" });
  server.registerTool("plain", { inputSchema: z.object({ seconds: z.number() }) }, async () => ({ content: [{ type: "text", text: "done" }] }));
  return server;
});
// The cast: the SDK types Node's request loosely, which exactOptionalPropertyTypes refuses.
const http = createServer(toNodeHandler(handler) as RequestListener);
http.listen(0, "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`));
process.on("SIGTERM", () => process.exit(0));
