// Bun: `MCP_YIELD_KEYS=… bun run examples/edge/bun.ts` (PORT, default 3000).
import { createEdgeApp } from "./app.js";

declare const Bun: { env: Record<string, string | undefined>; serve(options: { port: number; hostname: string; fetch: (request: Request) => Promise<Response> }): { port: number } };

const keys = Bun.env.MCP_YIELD_KEYS;
if (!keys) throw new Error("set MCP_YIELD_KEYS (npx mcp-yield keygen prints one)");
const app = createEdgeApp(keys);
const server = Bun.serve({ port: Number(Bun.env.PORT ?? 3000), hostname: "127.0.0.1", fetch: app.fetch });
console.log(`mcp-yield on Bun at http://127.0.0.1:${server.port}/mcp`);
