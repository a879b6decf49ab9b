// The example tools on a fetch-native platform (Deno, Bun, Cloudflare Workers): one web-standard
// `(Request) => Promise<Response>` built from the SDK's createMcpHandler and mcp-yield's runtime.
// Nothing here needs Node: where `node:crypto` is absent the state codec uses its portable path
// (@noble), which produces the same bytes — a requestState minted here verifies on Node and back.
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { createMemoryStore, createRuntime, parseKeyRing, type Runtime } from "mcp-yield";
import { register } from "mcp-yield/server";
import { planTrip } from "../tools/plan-trip.js";

export interface EdgeApp {
  /** Serves `/mcp` (stateless MCP over HTTP) and `GET /status` (which crypto the codec uses); anything else is a 404. */
  fetch(request: Request): Promise<Response>;
  runtime: Runtime;
}

/**
 * `keys` is the key ring every instance shares (`id:base64secret[,…]`, as `npx mcp-yield keygen`
 * prints it): rounds of one call may land on different isolates or processes.
 *
 * The store is memory, one per isolate: it is not shared, so a requestState is redeemed at most
 * once *per isolate* — replaying a round to another isolate is not refused. Several isolates that
 * must share single use (and tasks) need a shared store (the Store interface: Redis and PostgreSQL
 * are provided for Node, Deno and Bun; on Workers implement it over a Durable Object).
 */
export function createEdgeApp(keys: string): EdgeApp {
  const runtime = createRuntime({ state: { keys: parseKeyRing(keys) }, store: createMemoryStore() });
  const mcp = createMcpHandler(
    () => {
      const server = new McpServer({ name: "mcp-yield-edge-example", version: "0.1.0" });
      register(server, [planTrip], { runtime });
      return server;
    },
    { maxRequestBodySize: 1024 * 1024 },
  );
  return {
    runtime,
    fetch: async (request) => {
      const path = new URL(request.url).pathname;
      if (path === "/mcp") return mcp.fetch(request);
      if (path === "/status" && request.method === "GET") return Response.json({ crypto: runtime.codec.crypto });
      return new Response("Not found: the MCP endpoint is /mcp\n", { status: 404 });
    },
  };
}
