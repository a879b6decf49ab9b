// `npm run demo`: start the example server, then drive a scripted client through every example
// tool over real HTTP, printing each round as it happens.
import { callWithInput, createFetchSender, type InputHandlers } from "mcp-yield/client";
import { contentFor } from "./answer-from-schema.js";
import { keysFromEnv, startExampleServer } from "./app.js";

const running = await startExampleServer({ port: Number(process.env.PORT ?? 0), keys: keysFromEnv().keys });
console.log(`server listening on ${running.url}\n`);

// Declaring the tasks extension lets task-capable tools answer with a task, which the loop follows.
const send = createFetchSender(running.url, {
  clientInfo: { name: "mcp-yield-demo", version: "0.1.0" },
  capabilities: { elicitation: {}, sampling: {}, roots: {}, extensions: { "io.modelcontextprotocol/tasks": {} } },
});

const scripted: Record<string, Record<string, string | boolean>> = {
  name: { name: "Ada" },
  destination: { destination: "Kyoto" },
  confirm: { confirm: true },
};
const handlers: InputHandlers = {
  elicit: (params, { key }) => {
    const content = params.mode === "url" ? undefined : contentFor(params.requestedSchema, scripted[key]);
    console.log(`    ? ${params.message}\n    > ${JSON.stringify(content)}`);
    return { action: "accept", ...(content ? { content } : {}) };
  },
  sample: (params) => {
    console.log(`    ? sampling: ${JSON.stringify(params.messages[0]?.content)}`);
    return { role: "assistant", content: { type: "text", text: "A tidy TypeScript library with tests." }, model: "demo-model" };
  },
  roots: () => {
    console.log("    ? roots");
    return [{ uri: `file://${process.cwd()}`, name: "this checkout" }];
  },
};

const calls: Array<[string, Record<string, unknown>]> = [
  ["book_flight", { destination: "Lisbon" }],
  ["plan_trip", {}],
  ["workspace_summary", {}],
  ["generate_report", { topic: "tides" }],
  ["remind_later", { seconds: 1 }],
  ["flaky_fetch", {}],
  ["await_approval", { what: "the demo" }],
];
/** The approver: a person clicking the link in the status message, here a POST of JSON to it. */
const approved = new Set<string>();
function approve(statusMessage: string | undefined): void {
  const url = statusMessage?.match(/to (http\S+)$/)?.[1];
  if (url === undefined || approved.has(url)) return;
  approved.add(url);
  console.log(`    (a person approves: POST {"approved": true} to ${url.slice(0, 48)}…)`);
  void fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ approved: true }) }).then(
    (r) => console.log(`    (the signal route answered ${r.status})`),
    (e: unknown) => console.error("    (the POST failed:", e, ")"),
  );
}
let failed = false;
try {
  for (const [name, args] of calls) {
    console.log(`→ tools/call ${name} ${JSON.stringify(args)}`);
    let last = "";
    const result = await callWithInput<{ content: Array<{ text?: string }>; isError?: boolean }>(send, "tools/call", { name, arguments: args }, handlers, {
      onRound: ({ round, result: r }) => console.log(`  round ${round}: input_required (${Object.keys(r.inputRequests ?? {}).join(", ")}; state ${r.requestState?.length ?? 0} bytes)`),
      onTask: (task) => {
        const now = `${task.status}${task.statusMessage ? ` — ${task.statusMessage}` : ""}`;
        if (now !== last) console.log(`  task ${task.taskId.slice(0, 8)}…: ${now}`);
        last = now;
        approve(task.statusMessage);
      },
    });
    console.log(`  complete${result.isError ? " (isError)" : ""}: ${result.content.map((c) => c.text).join(" ")}\n`);
    failed ||= result.isError === true;
  }
} catch (error) {
  failed = true;
  console.error("demo failed:", error);
} finally {
  await running.close();
}
process.exitCode = failed ? 1 : 0;
