import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createRuntime, elicit, now, type RoundTrace, type Runtime, step, tool, uuid } from "mcp-yield";
import { testKey } from "../support/keys.js";

// Several instances, no affinity: a call's round comes back to an instance after others served
// the rounds between. The instance resumes the generator it holds for the call's earlier round
// when the presented journal extends it byte for byte, replaying only the newer records — and
// the call's outcome is exactly what replaying it from the top gives.

const keys = [testKey("p", 7)];
const info = { clientCapabilities: { elicitation: {} } };
const N = z.object({ n: z.number() });

/** A 6-ask tool with a step, now() and uuid() between asks; counts each step body's runs. */
function counting() {
  const runs = new Map<string, number>();
  const bump = (name: string) => runs.set(name, (runs.get(name) ?? 0) + 1);
  const def = tool({
    name: "count",
    description: "",
    input: z.object({ start: z.number() }),
    *run({ start }) {
      let sum = yield* step("base", () => (bump("base"), start));
      const id = yield* uuid();
      for (let i = 0; i < 6; i++) {
        const a = yield* elicit(`Number ${i} (sum so far ${sum})?`, N, { key: `n${i}` });
        sum += a.action === "accept" ? a.content.n : 0;
        if (i % 2 === 1) sum += yield* step(`bonus${i}`, () => (bump(`bonus${i}`), 100));
      }
      const at = yield* now();
      return `${sum} ${id.length} ${typeof at}`;
    },
  });
  return { def, runs };
}

function instances(n: number, options: Partial<Parameters<typeof createRuntime>[0]> = {}) {
  const traces: RoundTrace[][] = Array.from({ length: n }, () => []);
  const runtimes: Runtime[] = traces.map((t) => createRuntime({ state: { keys }, onRound: (r) => t.push(r), ...options }));
  return { runtimes, traces };
}

/** Drive the call, round r on instance `pick(r)`, answering n_i = i + 1. */
async function drive(runtimes: Runtime[], def: ReturnType<typeof counting>["def"], pick: (round: number) => number) {
  const args = { start: 5 };
  let result = await runtimes[pick(1)]!.callTool(def, { name: "count", arguments: args }, info);
  for (let round = 2; "requestState" in (result as object); round++) {
    const r = result as { requestState: string; inputRequests: Record<string, unknown> };
    const key = Object.keys(r.inputRequests)[0]!;
    const n = Number(key.slice(1)) + 1;
    result = await runtimes[pick(round)]!.callTool(def, { name: "count", arguments: args, requestState: r.requestState, inputResponses: { [key]: { action: "accept", content: { n } } } }, info);
  }
  return result as unknown as { content: Array<{ text: string }> };
}

describe("live-prefix resume: three instances, rounds round-robin", () => {
  it("an instance resumes its earlier generator, replaying only the rounds others served; the result and the step runs are those of a replay", async () => {
    const reference = counting();
    const alone = instances(1, { liveCalls: 0 });
    const replayed = await drive(alone.runtimes, reference.def, () => 0);

    const tested = counting();
    const { runtimes, traces } = instances(3);
    const result = await drive(runtimes, tested.def, (round) => (round - 1) % 3);
    expect(result).toEqual(replayed);
    expect(result.content[0]!.text).toBe(`${5 + 21 + 300} 36 number`);
    // Each step body ran once, as in the replayed reference.
    expect(Object.fromEntries(tested.runs)).toEqual(Object.fromEntries(reference.runs));
    expect([...tested.runs.values()].every((n) => n === 1)).toBe(true);
    // From round 4 on, every round found its instance's generator from three rounds before.
    const all = traces.flat().sort((a, b) => a.round - b.round);
    expect(all.map((t) => t.path)).toEqual(["first", "replayed", "replayed", "resumed", "resumed", "resumed", "resumed"]);
    for (const t of all.filter((t) => t.round >= 4)) {
      const full = all.find((u) => u.round === t.round - 1)!;
      // It replayed what the two other instances recorded, not the whole journal.
      expect(t.replayed).toBeGreaterThan(0);
      expect(t.replayed).toBeLessThan(full.replayed + 3);
    }
  });

  it("the same holds at random: any instance order gives the replayed outcome, steps once", async () => {
    const reference = counting();
    const replayed = await drive(instances(1, { liveCalls: 0 }).runtimes, reference.def, () => 0);
    for (let trial = 0; trial < 20; trial++) {
      const tested = counting();
      const { runtimes } = instances(3);
      expect(await drive(runtimes, tested.def, () => Math.floor(Math.random() * 3))).toEqual(replayed);
      expect(Object.fromEntries(tested.runs)).toEqual(Object.fromEntries(reference.runs));
    }
  });

  it("a journal that does not extend the held generator's (the client went back and answered differently) is replayed, never resumed", async () => {
    const { def, runs } = counting();
    const { runtimes, traces } = instances(3);
    const [a, b] = runtimes as [Runtime, Runtime, Runtime];
    const args = { start: 1 };
    const answer = (state: string, key: string, n: number) => ({ name: "count", arguments: args, requestState: state, inputResponses: { [key]: { action: "accept", content: { n } } } });
    const r1 = (await a.callTool(def, { name: "count", arguments: args }, info)) as { requestState: string };
    // Branch X: n0 = 1, its round 2 on a (a now holds the call at round 2).
    const x2 = (await a.callTool(def, answer(r1.requestState, "n0", 1), info)) as { requestState: string };
    expect(traces[0]!.at(-1)!.path).toBe("resumed");
    // Branch Y forks at round 1 (the same first token, another answer) and goes on on b.
    const y2 = (await b.callTool(def, answer(r1.requestState, "n0", 50), info)) as { requestState: string };
    const y3 = (await b.callTool(def, answer(y2.requestState, "n1", 1), info)) as { requestState: string };
    // a holds branch X at round 2; branch Y's round-3 journal differs at the n0 answer: replayed.
    const y4 = (await a.callTool(def, answer(y3.requestState, "n2", 1), info)) as { inputRequests: Record<string, { params: { message: string } }> };
    expect(traces[0]!.at(-1)!.path).toBe("replayed");
    expect(y4.inputRequests.n3!.params.message).toBe("Number 3 (sum so far 153)?");
    // a's newer generator (branch Y, round 4) replaced its branch-X one: one generator per call,
    // so branch X's next round on a is replayed, not resumed by its exact token.
    const x3 = (await a.callTool(def, answer(x2.requestState, "n1", 1), info)) as { inputRequests: Record<string, { params: { message: string } }> };
    expect(traces[0]!.at(-1)!.path).toBe("replayed");
    expect(x3.inputRequests.n2!.params.message).toBe("Number 2 (sum so far 103)?");
    expect(runs.get("base")).toBe(1);
  });

  it("a journal that differs from the held one only in an earlier answer's value (every ask the same) is replayed, never resumed", async () => {
    // Messages that do not depend on the answers: the forks' asks, and so their fingerprints,
    // are identical — only the recorded value of n0 tells the branches apart.
    const plain = tool({
      name: "plain",
      description: "",
      input: z.object({}),
      *run() {
        let sum = 0;
        for (let i = 0; i < 4; i++) {
          const a = yield* elicit(`Number ${i}?`, N, { key: `n${i}` });
          sum += a.action === "accept" ? a.content.n : 0;
        }
        return `sum ${sum}`;
      },
    });
    const { runtimes, traces } = instances(3);
    const [a, b] = runtimes as [Runtime, Runtime, Runtime];
    const answer = (state: string, key: string, n: number) => ({ name: "plain", arguments: {}, requestState: state, inputResponses: { [key]: { action: "accept", content: { n } } } });
    const r1 = (await a.callTool(plain, { name: "plain", arguments: {} }, info)) as { requestState: string };
    // Branch X: n0 = 1 on a, which then holds the call's generator at round 2, having seen n0 = 1.
    await a.callTool(plain, answer(r1.requestState, "n0", 1), info);
    // Branch Y: the same first token answered n0 = 50, on b.
    const y2 = (await b.callTool(plain, answer(r1.requestState, "n0", 50), info)) as { requestState: string };
    const y3 = (await b.callTool(plain, answer(y2.requestState, "n1", 2), info)) as { requestState: string };
    const y4 = (await a.callTool(plain, answer(y3.requestState, "n2", 3), info)) as { requestState: string };
    expect(traces[0]!.at(-1)!.path).toBe("replayed");
    const done = (await b.callTool(plain, answer(y4.requestState, "n3", 4), info)) as unknown as { content: Array<{ text: string }> };
    expect(done.content[0]!.text).toBe("sum 59");
  });

  it("a held generator of another definition under the same name is never resumed", async () => {
    const first = counting();
    const second = counting(); // a new deployment's definition object
    const { runtimes, traces } = instances(2);
    const [a, b] = runtimes as [Runtime, Runtime];
    const args = { start: 2 };
    const r1 = (await a.callTool(first.def, { name: "count", arguments: args }, info)) as { requestState: string };
    const r2 = (await b.callTool(first.def, { name: "count", arguments: args, requestState: r1.requestState, inputResponses: { n0: { action: "accept", content: { n: 1 } } } }, info)) as {
      requestState: string;
    };
    await a.callTool(second.def, { name: "count", arguments: args, requestState: r2.requestState, inputResponses: { n1: { action: "accept", content: { n: 1 } } } }, info);
    expect(traces[0]!.at(-1)!.path).toBe("replayed");
  });
});
