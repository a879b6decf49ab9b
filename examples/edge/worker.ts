// Cloudflare Workers (workerd): a module worker. Bundle it (examples/edge/README.md), bind the key
// ring as the secret MCP_YIELD_KEYS. No nodejs_compat flag needed: the codec's portable path runs.
import { createEdgeApp, type EdgeApp } from "./app.js";

interface Env {
  MCP_YIELD_KEYS: string;
}

// One app per isolate, made on the first request (Workers allow no timers or I/O at startup).
let app: EdgeApp | undefined;

export default {
  fetch(request: Request, env: Env): Promise<Response> {
    app ??= createEdgeApp(env.MCP_YIELD_KEYS);
    return app.fetch(request);
  },
};
