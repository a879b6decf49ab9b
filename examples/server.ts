// `npm start`: the example MCP server, stateless HTTP at http://127.0.0.1:$PORT/mcp.
// Tasks live in memory, or in Redis when MCP_YIELD_REDIS_URL is set (several instances).
import { keysFromEnv, startExampleServer, storeFromEnv } from "./app.js";

const port = Number(process.env.PORT ?? 3000);
const { keys, ephemeral } = keysFromEnv();
if (ephemeral) {
  console.warn("warning: MCP_YIELD_KEYS is not set; using an ephemeral key. Several instances (or a restart) need a shared key ring: MCP_YIELD_KEYS=id:base64secret[,id:base64secret...]");
}
const { store, label } = await storeFromEnv();
const running = await startExampleServer({ port, keys, store }).catch(async (error: NodeJS.ErrnoException) => {
  await store.close();
  if (error.code !== "EADDRINUSE") throw error;
  console.error(`Port ${port} is already in use (another server?). Pick another one: PORT=${port + 1} npm start`);
  process.exit(1);
});
console.log(`mcp-yield example server listening on ${running.url} (tasks in ${label})`);

const stop = () =>
  void running
    .close()
    .then(() => store.close())
    .then(() => process.exit(0));
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
