import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { all, createRuntime, elicit, now, ProtocolError, sample, step, tool } from "mcp-yield";
import { accept, sampled, simulate, type SimulateOptions } from "mcp-yield/testing";
import { bookFlight } from "../../examples/tools/book-flight.js";
import { testKey } from "../support/keys.js";

const keys = [testKey("p", 3)];
const runtime = createRuntime({ state: { keys } });
// The three ways a call's rounds can be served: the same instance resuming its suspended
// generator, an instance that must replay every round, and two instances taking turns.
const servings = {
  "one instance (resumes)": () => runtime,
  "replay every round": () => createRuntime({ state: { keys }, liveCalls: 0 }),
  "two instances alternating": () => [createRuntime({ state: { keys } }), createRuntime({ state: { keys } })],
};
const caps = { clientCapabilities: { elicitation: {}, sampling: {}, roots: {} } };

describe("replay properties", () => {
  it.each(Object.entries(servings))("random programs, %s: every step runs once, every ask gets the answer given for it", async (_how, serving) => {
    type Op = { t: "step" } | { t: "ask" } | { t: "all"; n: number };
    const program = fc.array(
      fc.oneof(
        fc.constant<Op>({ t: "step" }),
        fc.constant<Op>({ t: "ask" }),
        fc.integer({ min: 1, max: 3 }).map<Op>((n) => ({ t: "all", n })),
      ),
      { maxLength: 12 },
    );
    await fc.assert(
      fc.asyncProperty(program, fc.integer(), async (ops, seed) => {
        const runs = new Map<string, number>();
        const def = tool({
          name: "random",
          description: "",
          input: z.object({}),
          *run() {
            const seen: unknown[] = [];
            for (const [i, op] of ops.entries()) {
              if (op.t === "step") {
                seen.push(
                  yield* step(`s${i}`, () => {
                    runs.set(`s${i}`, (runs.get(`s${i}`) ?? 0) + 1);
                    return `${seed}:${i}`;
                  }),
                );
              } else if (op.t === "ask") {
                const a = yield* elicit(`q${i}`, z.object({ v: z.string() }));
                seen.push(a.action === "accept" ? a.content.v : a.action);
              } else {
                const answers = yield* all(Array.from({ length: op.n }, (_, j) => elicit(`q${i}.${j}`, z.object({ v: z.string() }))));
                seen.push(answers.map((a) => (a.action === "accept" ? a.content.v : a.action)).join("+"));
              }
            }
            return JSON.stringify(seen);
          },
        });
        // Every ask is answered with its own message, so a misdelivered answer shows.
        const sim = await simulate(def, {}, (req) => accept({ v: `answer to ${(req.params as { message: string }).message}` }), { runtime: serving() });
        const expected = ops.map((op, i) => (op.t === "step" ? `${seed}:${i}` : op.t === "ask" ? `answer to q${i}` : Array.from({ length: op.n }, (_, j) => `answer to q${i}.${j}`).join("+")));
        expect(JSON.parse(String(sim.result.content[0]!.text))).toEqual(expected);
        expect([...runs.values()].every((n) => n === 1)).toBe(true);
        expect(sim.rounds).toHaveLength(ops.filter((o) => o.t !== "step").length);
      }),
      { numRuns: 150 },
    );
  });

  it("programs that mutate what effects return, branch on ctx.can and record rich values give one result on every path", async () => {
    type Op = { t: "step"; rich: boolean } | { t: "mutate"; target: number } | { t: "ask" } | { t: "all"; n: number } | { t: "can"; kind: "sampling" | "roots" } | { t: "now" };
    const op = fc.oneof(
      fc.boolean().map<Op>((rich) => ({ t: "step", rich })),
      fc.nat(20).map<Op>((target) => ({ t: "mutate", target })),
      fc.constant<Op>({ t: "ask" }),
      fc.integer({ min: 1, max: 3 }).map<Op>((n) => ({ t: "all", n })),
      fc.constantFrom<Op>({ t: "can", kind: "sampling" }, { t: "can", kind: "roots" }),
      fc.constant<Op>({ t: "now" }),
    );
    // Odd rounds declare sampling, even rounds do not: ctx.can answers differ between rounds.
    const capabilities = (round: number) => (round % 2 === 1 ? { elicitation: {}, sampling: {} } : { elicitation: {} });
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 10 }), async (ops) => {
        const outcomes: string[] = [];
        for (const options of [
          { paths: "resume" },
          { paths: "replay" },
          { paths: "both" },
          { runtime: [createRuntime({ state: { keys } }), createRuntime({ state: { keys } })] },
        ] as SimulateOptions[]) {
          const runs = new Map<string, number>();
          const def = tool({
            name: "mutating",
            description: "",
            input: z.object({}),
            *run(_i, ctx) {
              const held: Array<{ list: number[]; at?: Date }> = [];
              const seen: unknown[] = [];
              for (const [i, o] of ops.entries()) {
                if (o.t === "step") {
                  held.push(
                    yield* step(`s${i}`, () => {
                      runs.set(`s${i}`, (runs.get(`s${i}`) ?? 0) + 1);
                      return o.rich ? { list: [i], at: new Date(i) } : { list: [i] };
                    }),
                  );
                } else if (o.t === "mutate") {
                  const h = held[o.target % Math.max(held.length, 1)];
                  h?.list.push(h.list.length); // code changes a value an effect returned
                  h?.at?.setTime(h.at.getTime() + 1);
                } else if (o.t === "ask") {
                  const a = yield* elicit(`q${i} ${JSON.stringify(held)}`, z.object({ v: z.string() }));
                  seen.push(a.action === "accept" ? a.content.v.length : a.action);
                } else if (o.t === "all") {
                  const answers = yield* all(Array.from({ length: o.n }, (_, j) => elicit(`q${i}.${j} ${held.length}`, z.object({ v: z.string() }))));
                  seen.push(answers.map((a) => a.action));
                } else if (o.t === "can") {
                  if (ctx.can(o.kind) && o.kind === "sampling") seen.push((yield* sample({ messages: [], maxTokens: 1 })).model);
                  else seen.push(`no ${o.kind}`);
                } else {
                  seen.push(typeof (yield* now()));
                }
              }
              return JSON.stringify({ seen, held });
            },
          });
          const sim = await simulate(def, {}, (req) => (req.method === "sampling/createMessage" ? sampled("s", "model") : accept({ v: (req.params as { message: string }).message })), {
            ...options,
            capabilities,
          });
          expect([...runs.values()].every((n) => n === 1)).toBe(true);
          outcomes.push(String(sim.result.content[0]!.text));
        }
        expect(new Set(outcomes).size).toBe(1);
      }),
      { numRuns: 100 },
    );
  });

  it("arbitrary answers never crash a round and never book without a valid confirm", async () => {
    const first = (await runtime.callTool(bookFlight, { name: "book_flight", arguments: { destination: "Rome" } }, caps)) as { requestState: string };
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.anything(), fc.record({ action: fc.constantFrom("accept", "decline", "cancel", "x"), content: fc.anything() }, { requiredKeys: ["action"] })),
        fc.constantFrom("confirm", "other", "__proto__"),
        async (answer, key) => {
          const responses: Record<string, unknown> = {};
          Object.defineProperty(responses, key, { value: answer, enumerable: true });
          let result: Awaited<ReturnType<typeof runtime.callTool>>;
          try {
            result = await runtime.callTool(bookFlight, { name: "book_flight", arguments: { destination: "Rome" }, requestState: first.requestState, inputResponses: responses }, caps);
          } catch (e) {
            expect(e).toBeInstanceOf(ProtocolError);
            return;
          }
          const valid =
            key === "confirm" &&
            typeof answer === "object" &&
            answer !== null &&
            (answer as { action?: unknown }).action === "accept" &&
            (answer as { content?: { confirm?: unknown } }).content?.confirm === true;
          const booked = result.resultType === "complete" && !result.isError && String(result.content[0]?.text).startsWith("Booked");
          expect(booked).toBe(valid);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
