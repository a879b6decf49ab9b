import { callToolParams, createMessageResult, elicitResult, inputRequest, inputRequests, inputRequiredResult, listRootsResult, resultType } from "mcp-yield/wire";
import { describe, expect, it } from "vitest";
import { describeZodError } from "../../src/internal.js";

// What the page's examples do not show: URL mode and a roots request without params.
const otherRequests = {
  roots: { method: "roots/list" },
  login: { method: "elicitation/create", params: { mode: "url", message: "Sign in", url: "https://example.com/login?x=1" } },
};

// The JSON examples of the 2026-07-28 specification's MRTR pattern page
// (docs/specification/2026-07-28/basic/patterns/mrtr.mdx), comments removed.
const specPage = {
  inputRequests: {
    github_login: {
      method: "elicitation/create",
      params: {
        mode: "form",
        message: "Please provide your GitHub username",
        requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
      },
    },
    capital_of_france: {
      method: "sampling/createMessage",
      params: {
        messages: [{ role: "user", content: { type: "text", text: "What is the capital of France?" } }],
        modelPreferences: { hints: [{ name: "claude-3-sonnet" }], intelligencePriority: 0.8, speedPriority: 0.5 },
        systemPrompt: "You are a helpful assistant.",
        maxTokens: 100,
      },
    },
  },
  inputResponses: {
    github_login: { action: "accept", content: { name: "octocat" } },
    capital_of_france: {
      role: "assistant",
      content: { type: "text", text: "The capital of France is Paris." },
      model: "claude-3-sonnet-20240307",
      stopReason: "endTurn",
    },
  },
};

describe("the specification's examples", () => {
  it("parse: InputRequests, InputResponses (each against its result schema) and InputRequiredResult", () => {
    expect(Object.keys(inputRequests.parse(specPage.inputRequests))).toEqual(["github_login", "capital_of_france"]);
    expect(elicitResult.parse(specPage.inputResponses.github_login).content).toEqual({ name: "octocat" });
    expect(createMessageResult.parse(specPage.inputResponses.capital_of_france).stopReason).toBe("endTurn");
    const result = inputRequiredResult.parse({ resultType: "input_required", inputRequests: specPage.inputRequests, requestState: "AEAD-protected blob" });
    expect(result.requestState).toBe("AEAD-protected blob");
  });
});

describe("wire schemas", () => {
  it("parse URL-mode elicitation and a bare roots request", () => {
    const parsed = inputRequiredResult.parse({ resultType: "input_required", inputRequests: otherRequests });
    expect(parsed.inputRequests?.login?.method).toBe("elicitation/create");
    expect(inputRequest.safeParse({ method: "elicitation/create", params: { mode: "url", message: "m", url: "not a url" } }).success).toBe(false);
  });

  it("accept a state-only input_required and refuse an empty one", () => {
    expect(inputRequiredResult.safeParse({ resultType: "input_required", requestState: "x" }).success).toBe(true);
    const empty = inputRequiredResult.safeParse({ resultType: "input_required" });
    expect(empty.success).toBe(false);
    expect(describeZodError(empty.error!)).toContain("inputRequests");
  });

  it("parse the three kinds of answers", () => {
    expect(elicitResult.parse({ action: "accept", content: { name: "octocat" } }).action).toBe("accept");
    expect(elicitResult.parse({ action: "decline" }).content).toBeUndefined();
    expect(createMessageResult.parse({ role: "assistant", content: { type: "text", text: "hi" }, model: "m", stopReason: "endTurn" }).model).toBe("m");
    expect(listRootsResult.parse({ roots: [{ uri: "file:///home/u/p", name: "p" }] }).roots).toHaveLength(1);
  });

  it("parse tools/call params carrying inputResponses and requestState", () => {
    const p = callToolParams.parse({
      name: "book_flight",
      arguments: { destination: "Lisbon" },
      inputResponses: { confirm: { action: "accept", content: { confirm: true } } },
      requestState: "y1e.k1.abc",
      _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" },
    });
    expect(p.requestState).toBe("y1e.k1.abc");
  });

  const wrong: Array<[string, unknown, (x: unknown) => { success: boolean; error?: unknown }, string]> = [
    ["elicit action", { action: "maybe" }, (x) => elicitResult.safeParse(x), "action"],
    ["elicit content value", { action: "accept", content: { a: { nested: 1 } } }, (x) => elicitResult.safeParse(x), "content.a"],
    ["sampling model", { role: "assistant", content: { type: "text", text: "x" } }, (x) => createMessageResult.safeParse(x), "model"],
    ["root uri scheme", { roots: [{ uri: "https://x" }] }, (x) => listRootsResult.safeParse(x), "roots.0.uri"],
    ["request method", { method: "tools/call", params: {} }, (x) => inputRequest.safeParse(x), "method"],
    ["requestedSchema type", { method: "elicitation/create", params: { message: "m", requestedSchema: { type: "array", properties: {} } } }, (x) => inputRequest.safeParse(x), "params"],
    ["sampling maxTokens", { method: "sampling/createMessage", params: { messages: [] } }, (x) => inputRequest.safeParse(x), "params.maxTokens"],
    ["resultType", "done", (x) => resultType.safeParse(x), "(root)"],
    ["tool params name", { arguments: {} }, (x) => callToolParams.safeParse(x), "name"],
    ["inputResponses not an object", { name: "t", inputResponses: [1] }, (x) => callToolParams.safeParse(x), "inputResponses"],
  ];
  it.each(wrong)("refuse a wrong %s with a message naming the field", (_label, value, parse, field) => {
    const r = parse(value) as { success: boolean; error?: import("zod").ZodError };
    expect(r.success).toBe(false);
    expect(describeZodError(r.error!)).toContain(field);
  });
});
