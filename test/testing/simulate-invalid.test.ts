import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createRuntime, elicit, tool } from "mcp-yield";
import { accept, simulate } from "mcp-yield/testing";
import { testKey } from "../support/keys.js";

// A scripted answer the ask's schema refuses is asked for again, round after round: simulate
// says which answer it is, instead of only running out of rounds (issue 24).

const pick = tool({
  name: "pick",
  description: "",
  input: z.object({}),
  *run() {
    const n = yield* elicit("A number of at least 10?", z.object({ n: z.number().min(10) }), { key: "n" });
    return n.action === "accept" ? `got ${n.content.n}` : "none";
  },
});

describe("simulate with an answer the schema refuses", () => {
  it("names the key, the answer and the ask when the call runs out of rounds on it", async () => {
    await expect(simulate(pick, {}, { n: accept({ n: 3 }) }, { maxRounds: 6 })).rejects.toThrow(
      /did not complete within 6 rounds: it asked for "n" in each of the last \d rounds and got the same answer each time, \{"action":"accept","content":\{"n":3\}\} — which the ask's schema refuses: n: Too small: expected number to be >=10\. Check it against the ask \(elicitation\/create "A number of at least 10\?", schema \{/,
    );
  });

  it("the re-ask's message says why the answer was refused; the ask itself is unchanged", async () => {
    // "both": every round served resumed and replayed, and the two must agree.
    const sim = await simulate(pick, {}, { n: (_req, round) => accept({ n: round === 1 ? 3 : 11 }) }, { paths: "both" });
    expect(sim.result).toMatchObject({ content: [{ type: "text", text: "got 11" }] });
    const [first, again] = sim.rounds.map((r) => r.inputRequests.n as { method: string; params: { message: string; requestedSchema: unknown } });
    expect(first!.params.message).toBe("A number of at least 10?");
    expect(again!.params.message).toBe("A number of at least 10?\n\n(Your previous answer was not accepted: n: Too small: expected number to be >=10. Please answer again.)");
    expect(again!.params.requestedSchema).toEqual(first!.params.requestedSchema);
  });

  it("a valid answer completes as before", async () => {
    expect((await simulate(pick, {}, { n: accept({ n: 12 }) })).result).toMatchObject({ content: [{ type: "text", text: "got 12" }] });
  });
});

describe("a refused answer inside a task", () => {
  it("tasks/get asks again, saying why; a valid answer then completes the task", async () => {
    const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } };
    const info = { clientCapabilities: { elicitation: {}, ...TASKS } };
    const runtime = createRuntime({ state: { keys: [testKey("k", 3)] }, onError: () => {} });
    try {
      const inTask = tool({ ...pick, name: "pick_task", task: "required", run: pick.run });
      const { taskId } = (await runtime.callTool(inTask, { name: "pick_task", arguments: {} }, info)) as { taskId: string };
      const asking = async (why: (message: string) => boolean) => {
        for (let i = 0; i < 500; i++) {
          const t = (await runtime.getTask({ taskId }, info)) as unknown as {
            status: string;
            inputRequests?: Record<string, { params: { message: string } }>;
            result?: { content: Array<{ text: string }> };
          };
          const open = Object.entries(t.inputRequests ?? {});
          if (t.status === "completed" || (t.status === "input_required" && open.some(([, r]) => why(r.params.message)))) return { t, open };
          await new Promise((r) => setTimeout(r, 10));
        }
        throw new Error("the task did not get there");
      };
      const first = await asking((m) => m === "A number of at least 10?");
      await runtime.updateTask({ taskId, inputResponses: { [first.open[0]![0]]: { action: "accept", content: { n: 3 } } } }, info);
      const again = await asking((m) => m.includes("not accepted"));
      expect(again.open[0]![1].params.message).toBe("A number of at least 10?\n\n(Your previous answer was not accepted: n: Too small: expected number to be >=10. Please answer again.)");
      await runtime.updateTask({ taskId, inputResponses: { [again.open[0]![0]]: { action: "accept", content: { n: 10 } } } }, info);
      const done = await asking(() => false);
      expect(done.t.result!.content[0]!.text).toBe("got 10");
    } finally {
      await runtime.close();
    }
  });
});

describe("scripted answers typed from the ask's form", () => {
  const Trip = z.object({ destination: z.enum(["Lisbon", "Kyoto"]), nights: z.number().int().min(1) });
  const trip = tool({
    name: "trip",
    description: "",
    input: z.object({}),
    *run() {
      const t = yield* elicit("Where, and how long?", Trip, { key: "trip" });
      return t.action === "accept" ? `${t.content.destination} × ${t.content.nights}` : "none";
    },
  });

  it("accept(schema, content) answers as accept(content) does", async () => {
    expect((await simulate(trip, {}, { trip: accept(Trip, { destination: "Kyoto", nights: 3 }) })).result).toMatchObject({ content: [{ type: "text", text: "Kyoto × 3" }] });
  });

  it("a misspelt field or a value of the wrong type does not compile (checked by npm test's typecheck)", () => {
    // @ts-expect-error "Osaka" is not one of the enum's values
    const wrongValue = accept(Trip, { destination: "Osaka", nights: 3 });
    // @ts-expect-error nights must be a number
    const wrongType = accept(Trip, { destination: "Kyoto", nights: "3" });
    // @ts-expect-error "night" is not a field of the form (and "nights" is missing)
    const misspelt = accept(Trip, { destination: "Kyoto", night: 3 });
    expect([wrongValue, wrongType, misspelt].map((a) => a.action)).toEqual(["accept", "accept", "accept"]);
  });
});
