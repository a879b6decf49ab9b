import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const client = new Client(
  { name: "my-app", version: "1.0.0" },
  {
    capabilities: { elicitation: {} }, // what this client can answer
    versionNegotiation: { mode: { pin: "2026-07-28" } }, // or { mode: "auto" }: see Troubleshooting
  },
);
// The SDK answers the server's questions with these handlers, then retries the call itself.
client.setRequestHandler("elicitation/create", async (request) => {
  console.log(`The server asks: ${request.params.message}`); // ask your user here
  return { action: "accept", content: { confirm: true } };
});
await client.connect(new StreamableHTTPClientTransport(new URL(process.env.MCP_URL ?? "http://127.0.0.1:3000/mcp")));
const result = await client.callTool({ name: "book_flight", arguments: { destination: "Lisbon" } });
console.log(result.content);
await client.close();
