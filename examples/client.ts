// An interactive terminal client: `npm run client -- http://127.0.0.1:3000/mcp`.
// Lists the server's tools, calls the one you pick, and asks you each question the server asks.
// Answers come from the terminal or, piped, one per line: `printf '2\nAda\n' | npm run client`.
import { createInterface } from "node:readline";
import { callWithInput, createFetchSender, type InputHandlers } from "mcp-yield/client";
import type { PrimitiveSchemaDefinition } from "mcp-yield";

const url = process.argv[2] ?? "http://127.0.0.1:3000/mcp";
const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: process.stdin.isTTY === true });
// One line per question, from a terminal or a pipe alike (readline/promises' question() fails
// once a pipe has ended, even with lines still unread).
const lines = rl[Symbol.asyncIterator]();
const question = async (prompt: string): Promise<string> => {
  process.stdout.write(prompt);
  const next = await lines.next();
  if (next.done) throw new Error("no more input (the answers ran out)");
  if (process.stdin.isTTY !== true) process.stdout.write(`${next.value}\n`);
  return next.value;
};
const send = createFetchSender(url, { clientInfo: { name: "mcp-yield-terminal", version: "0.1.0" }, capabilities: { elicitation: {}, sampling: {}, roots: {} } });

async function askField(name: string, field: PrimitiveSchemaDefinition, required: boolean): Promise<string | number | boolean | string[] | undefined> {
  const label = field.title ?? field.description ?? name;
  const choices = field.type === "array" ? ("enum" in field.items ? field.items.enum : field.items.anyOf.map((o) => o.const)) : "enum" in field && Array.isArray(field.enum) ? field.enum : undefined;
  for (;;) {
    const hint = field.type === "boolean" ? " (y/n)" : choices ? ` [${choices.join(" | ")}]${field.type === "array" ? " comma-separated" : ""}` : "";
    const raw = (await question(`  ${label}${hint}${required ? "" : " (optional)"}: `)).trim();
    if (raw === "" && !required) return undefined;
    if (field.type === "boolean" && /^(y|yes|n|no|true|false)$/i.test(raw)) return /^(y|yes|true)$/i.test(raw);
    if ((field.type === "number" || field.type === "integer") && raw !== "" && Number.isFinite(Number(raw))) return Number(raw);
    if (field.type === "array")
      return raw
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
    if (field.type === "string" && raw !== "" && (!choices || choices.includes(raw))) return raw;
    console.log("  (not a valid answer, try again)");
  }
}

const handlers: InputHandlers = {
  elicit: async (params) => {
    console.log(`\nThe server asks: ${params.message}`);
    if (params.mode === "url") {
      console.log(`  Open: ${params.url}`);
      const ok = await question("  Done? (y = accept, n = decline, c = cancel): ");
      return { action: ok.startsWith("y") ? "accept" : ok.startsWith("c") ? "cancel" : "decline" };
    }
    const go = (await question("  Answer? (Enter = yes, d = decline, c = cancel): ")).trim();
    if (go === "d") return { action: "decline" };
    if (go === "c") return { action: "cancel" };
    const content: Record<string, string | number | boolean | string[]> = {};
    const required = new Set(params.requestedSchema.required ?? []);
    for (const [name, field] of Object.entries(params.requestedSchema.properties)) {
      const value = await askField(name, field, required.has(name));
      if (value !== undefined) content[name] = value;
    }
    return { action: "accept", content };
  },
  sample: async (params) => {
    console.log(`\nThe server asks your model: ${JSON.stringify(params.messages.map((m) => m.content))}`);
    const text = await question("  Type the model's reply: ");
    return { role: "assistant", content: { type: "text", text }, model: "human-in-the-loop" };
  },
  roots: () => [{ uri: `file://${process.cwd()}`, name: "current directory" }],
};

try {
  const { tools } = (await send("tools/list", {})) as { tools: Array<{ name: string; description?: string; inputSchema?: { properties?: Record<string, { type?: string }>; required?: string[] } }> };
  for (const [i, t] of tools.entries()) console.log(`${i + 1}. ${t.name} — ${t.description ?? ""}`);
  const pick = tools[Number(await question("\nWhich tool? (number): ")) - 1];
  if (!pick) throw new Error("no such tool");
  const args: Record<string, unknown> = {};
  for (const [name, prop] of Object.entries(pick.inputSchema?.properties ?? {})) {
    const raw = await question(`${name}: `);
    args[name] = prop.type === "number" || prop.type === "integer" ? Number(raw) : prop.type === "boolean" ? /^y/i.test(raw) : raw;
  }
  const result = await callWithInput<{ content: Array<{ text?: string }>; isError?: boolean }>(send, "tools/call", { name: pick.name, arguments: args }, handlers);
  console.log(`\n${result.isError ? "Error" : "Result"}: ${result.content.map((c) => c.text).join("\n")}`);
} catch (error) {
  console.error(`\nFailed: ${(error as Error).message}`);
  process.exitCode = 1;
} finally {
  rl.close();
}
