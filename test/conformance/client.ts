// The client under test for the conformance suite's client scenario: `conformance client
// --command "npx tsx test/conformance/client.ts"` appends the mock server's URL. It lists the
// tools and calls them all at once through mcp-yield's client loop, answering every ask.
import { callWithInput, createFetchSender, type InputHandlers } from "mcp-yield/client";
import { contentFor } from "../../examples/answer-from-schema.js";

const url = process.argv.at(-1);
if (!url?.startsWith("http")) {
  console.error("usage: client.ts <server url>");
  process.exit(2);
}
const send = createFetchSender(url, { capabilities: { elicitation: {}, sampling: {}, roots: {} } });
const listed = (await send("tools/list", {})) as { tools: Array<{ name: string }> };
const handlers: InputHandlers = {
  elicit: (params) => (params.mode === "url" ? { action: "accept" } : { action: "accept", content: contentFor(params.requestedSchema) }),
  sample: () => ({ role: "assistant", content: { type: "text", text: "conformance" }, model: "conformance-client" }),
  roots: () => [{ uri: "file:///tmp/conformance" }],
};
const results = await Promise.allSettled(listed.tools.map((t) => callWithInput(send, "tools/call", { name: t.name, arguments: {} }, handlers)));
for (const [i, r] of results.entries()) console.log(listed.tools[i]!.name, r.status === "fulfilled" ? JSON.stringify(r.value) : String(r.reason));
