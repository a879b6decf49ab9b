import { all, elicit, listRoots, prompt, sample, step, tool, toolError } from "mcp-yield";
import { z } from "zod";

/**
 * The fixtures the public conformance suite (@modelcontextprotocol/conformance) calls, written
 * with the runtime like any other tool.
 */

const UserName = z.object({ name: z.string() });
const empty = z.object({});
const question = (text: string) => ({ messages: [{ role: "user" as const, content: { type: "text" as const, text } }], maxTokens: 100 });
const textOf = (content: unknown): string => {
  const blocks = Array.isArray(content) ? content : [content];
  return blocks.map((b) => (typeof b === "object" && b !== null && "text" in b ? String((b as { text: unknown }).text) : "")).join(" ");
};

export const conformanceElicitation = tool({
  name: "test_input_required_result_elicitation",
  description: "Asks for the user's name under the key user_name",
  input: empty,
  *run() {
    // The suite also sends the answer on a first request, before it was asked (a client that
    // knows the key): a name is harmless to take unasked, so this ask opts in.
    const a = yield* elicit("What is your name?", UserName, { key: "user_name", acceptUnasked: true });
    return a.action === "accept" ? `Hello, ${a.content.name}!` : toolError(`Elicitation ${a.action}ed.`);
  },
});

export const conformanceSampling = tool({
  name: "test_input_required_result_sampling",
  description: "Asks the client's model a question",
  input: empty,
  *run() {
    const r = yield* sample(question("What is the capital of France?"), { key: "capital_question" });
    return `The model answered: ${textOf(r.content)}`;
  },
});

export const conformanceListRoots = tool({
  name: "test_input_required_result_list_roots",
  description: "Asks the client for its roots",
  input: empty,
  *run() {
    const roots = yield* listRoots({ key: "client_roots" });
    return `Roots: ${roots.map((r) => r.uri).join(", ") || "(none)"}`;
  },
});

export const conformanceRequestState = tool({
  name: "test_input_required_result_request_state",
  description: "Asks once, with inputRequests and requestState; answers state-ok once the state verifies",
  input: empty,
  *run() {
    // A recorded step puts something in the journal that only a verified state can give back.
    const started = yield* step("started", () => new Date().toISOString());
    const a = yield* elicit("Please confirm", z.object({ ok: z.boolean() }), { key: "confirm" });
    return a.action === "accept" ? `state-ok: confirmed ${String(a.content.ok)}, call started ${started}.` : toolError(`Not confirmed: ${a.action}.`);
  },
});

export const conformanceMultipleInputs = tool({
  name: "test_input_required_result_multiple_inputs",
  description: "Asks for elicitation, sampling and roots in one round",
  input: empty,
  *run() {
    const { user, answer, roots } = yield* all({
      user: elicit("What is your name?", UserName, { key: "user_name" }),
      answer: sample({ ...question("Generate a greeting"), maxTokens: 50 }, { key: "greeting" }),
      roots: listRoots({ key: "client_roots" }),
    });
    const name = user.action === "accept" ? user.content.name : user.action;
    return `Name: ${name}; model: ${textOf(answer.content)}; roots: ${roots.map((r) => r.uri).join(", ")}`;
  },
});

export const conformanceMultiRound = tool({
  name: "test_input_required_result_multi_round",
  description: "Two asks in two rounds",
  input: empty,
  *run() {
    const first = yield* elicit("Step 1: What is your name?", UserName, { key: "step1" });
    if (first.action !== "accept") return toolError("Cancelled.");
    const second = yield* elicit("Step 2: What is your favorite color?", z.object({ color: z.string() }), { key: "step2" });
    if (second.action !== "accept") return toolError("Cancelled.");
    return `${first.content.name} likes ${second.content.color}.`;
  },
});

export const conformanceTamperedState = tool({
  name: "test_input_required_result_tampered_state",
  description: "Issues a state; a tampered echo is rejected",
  input: empty,
  *run() {
    const a = yield* elicit("Please confirm", z.object({ confirm: z.boolean() }), { key: "confirm" });
    return a.action === "accept" ? "State verified." : toolError(a.action);
  },
});

export const conformanceCapabilities = tool({
  name: "test_input_required_result_capabilities",
  description: "Asks only for what the client declared",
  input: empty,
  *run(_input, ctx) {
    if (ctx.can("elicitation")) {
      const a = yield* elicit("What is your name?", UserName, { key: "user_name" });
      return a.action === "accept" ? `Hello, ${a.content.name}!` : toolError(a.action);
    }
    if (ctx.can("sampling")) {
      const r = yield* sample(question("Pick a name for the user."), { key: "sampled_name" });
      return `Sampled: ${textOf(r.content)}`;
    }
    if (ctx.can("roots")) return `Roots: ${(yield* listRoots({ key: "client_roots" })).map((r) => r.uri).join(", ")}`;
    return "No client capability to ask with; nothing asked.";
  },
});

export const conformancePrompt = prompt({
  name: "test_input_required_result_prompt",
  description: "Asks for context before producing the prompt",
  *run() {
    const a = yield* elicit("What context should the prompt use?", z.object({ context: z.string() }), { key: "user_context" });
    return `Context: ${a.action === "accept" ? a.content.context : "(none)"}`;
  },
});

export const conformanceFixtures = [
  conformanceElicitation,
  conformanceSampling,
  conformanceListRoots,
  conformanceRequestState,
  conformanceMultipleInputs,
  conformanceMultiRound,
  conformanceTamperedState,
  conformanceCapabilities,
  conformancePrompt,
];
