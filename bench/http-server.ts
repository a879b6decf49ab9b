// The HTTP benchmark's server: one process, two endpoints on the same SDK stack.
// /gen serves the 3-ask `count` tool written as a generator (mcp-yield/server);
// /hand serves the same tool hand-written on McpServer.registerTool with our codec.
import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";
import { toNodeHandler } from "@modelcontextprotocol/node";
import { createMcpHandler, inputRequired, McpServer, type ServerContext } from "@modelcontextprotocol/server";
import { z } from "zod";
import { createRuntime, createStateCodec, toRequestedSchema } from "mcp-yield";
import { elicitResult } from "mcp-yield/wire";
import { register } from "mcp-yield/server";
import { countGenerator, Num } from "./counting-tools.js";

const keys = [{ id: "http", secret: new Uint8Array(32).fill(11) }];
const runtime = createRuntime({ state: { keys } });
const codec = createStateCodec<{ i: number; sum: number }>({ keys });
const requestedSchema = toRequestedSchema(Num);

const gen = createMcpHandler(() => {
  const server = new McpServer({ name: "bench-gen", version: "1" });
  register(server, [countGenerator], { runtime });
  return server;
});

const hand = createMcpHandler(() => {
  const server = new McpServer({ name: "bench-hand", version: "1" });
  server.registerTool("count", { description: "asks for R numbers and sums them", inputSchema: z.object({ rounds: z.number().int().min(1).max(1000) }) }, async (args, ctx: ServerContext) => {
    const binding = { method: "tools/call" as const, target: "count", arguments: args };
    const raw = ctx.mcpReq.requestState() as string | undefined;
    let st = raw === undefined ? { i: 0, sum: 0 } : codec.open(raw, binding).data;
    const responses = ctx.mcpReq.inputResponses ?? {};
    const key = `n${st.i}`;
    const answer = elicitResult.safeParse(Object.hasOwn(responses, key) ? responses[key] : undefined);
    if (answer.success && answer.data.action === "accept") {
      const content = Num.safeParse(answer.data.content);
      if (content.success) st = { i: st.i + 1, sum: st.sum + content.data.n };
    }
    if (st.i >= args.rounds) return { content: [{ type: "text" as const, text: `sum ${st.sum}` }] };
    return inputRequired({
      // The wire schema is built once (not from zod every round), as a careful author would.
      inputRequests: { [`n${st.i}`]: inputRequired.elicit({ message: `Number ${st.i + 1} of ${args.rounds}?`, requestedSchema: requestedSchema as never }) },
      requestState: codec.seal({ binding, data: st }),
    });
  });
  return server;
});

const genNode = toNodeHandler(gen) as RequestListener;
const handNode = toNodeHandler(hand) as RequestListener;
const server = createServer((req, res) => {
  const path = (req.url ?? "").split("?")[0];
  if (path === "/gen") void genNode(req, res);
  else if (path === "/hand") void handNode(req, res);
  else res.writeHead(404).end();
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
process.on("SIGTERM", () => process.exit(0));
