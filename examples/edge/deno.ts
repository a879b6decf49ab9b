// Deno: `MCP_YIELD_KEYS=… deno run --allow-net --allow-env --allow-read examples/edge/deno.ts`
// (PORT, default 8000). Deno reads the project's package.json and node_modules.
import { createEdgeApp } from "./app.js";

declare const Deno: {
  env: { get(name: string): string | undefined };
  serve(options: { port: number; hostname: string; onListen?: (addr: { port: number }) => void }, handler: (request: Request) => Promise<Response>): unknown;
};

const keys = Deno.env.get("MCP_YIELD_KEYS");
if (!keys) throw new Error("set MCP_YIELD_KEYS (npx mcp-yield keygen prints one)");
const app = createEdgeApp(keys);
Deno.serve({ port: Number(Deno.env.get("PORT") ?? 8000), hostname: "127.0.0.1", onListen: ({ port }) => console.log(`mcp-yield on Deno at http://127.0.0.1:${port}/mcp`) }, app.fetch);
