import { describe, expect, it } from "vitest";
import { z } from "zod";
import { all, elicit, race, sleep, step, tool, waitForSignal } from "mcp-yield";
import { accept, type SimulatedPaths, simulate } from "mcp-yield/testing";

// race(...) and all(...) over steps in the foreground: what they refuse when made (a clear
// TypeError, naming the branch or item), what an author failure in them does, the bound on
// steps at once, and that a replay never runs a recorded step again — every round served
// resumed, replayed, and both (each round replayed from its state and compared).

const Confirm = z.object({ ok: z.boolean() });
const paths: SimulatedPaths[] = ["replay", "resume", "both"];

describe("race() and all() refuse what they cannot run", () => {
  const first = (op: Generator) => () => op.next();
  it("race: no branch, not an object, a bad name, a retrying step, something not an effect", () => {
    expect(first(race({}))).toThrow("race(): give at least one branch");
    expect(first(race([] as never))).toThrow(/give an object of named branches/);
    expect(first(race({ "a b": sleep(1) }))).toThrow(/branch name is 1-64 characters/);
    expect(first(race({ s: step("s", () => 1, { retry: { attempts: 2 } }) }))).toThrow(/branch "s" is a step that retries/);
    expect(first(race({ x: (function* () {})() as never }))).toThrow(/branch "x" must be waitForSignal, sleep, an ask/);
  });

  it("all: asks and steps mixed, a retrying step, two steps of one name, a bad concurrency", () => {
    expect(first(all([elicit("a", Confirm), step("s", () => 1)]))).toThrow(/give asks or steps, not both/);
    expect(first(all([step("s", () => 1, { retry: {} })]))).toThrow(/item 0 is a step that retries/);
    expect(first(all({ a: step("s", () => 1), b: step("s", () => 2) }))).toThrow(/two steps are named "s"/);
    expect(first(all([step("s", () => 1)], { concurrency: 0 }))).toThrow(/concurrency must be an integer ≥ 1, got 0/);
    expect(first(all([sleep(1)] as never))).toThrow(/item 0 must be an ask .* or a step/);
  });
});

describe.each(paths)("race() and all() over steps in the foreground (%s)", (how) => {
  it("two steps race: the first to return wins, the other is aborted; a replay runs neither again", async () => {
    const ran: string[] = [];
    let aborted = 0;
    const quickest = tool({
      name: "quickest",
      description: "",
      input: z.object({}),
      async *run() {
        const first = yield* race({
          slow: step("slow", (signal) => {
            ran.push("slow");
            return new Promise<string>((resolve) =>
              signal.addEventListener("abort", () => {
                aborted++;
                resolve("late");
              }),
            );
          }),
          fast: step("fast", () => {
            ran.push("fast");
            return "now";
          }),
        });
        const ok = yield* elicit("Go on?", Confirm);
        return `${first.winner}=${first.value} ${ok.action}`;
      },
    });
    const sim = await simulate(quickest, {}, { "elicit-1": accept({ ok: true }) }, { paths: how });
    expect(sim.result.content).toEqual([{ type: "text", text: "fast=now accept" }]);
    expect(ran.sort()).toEqual(["fast", "slow"]);
    expect(aborted).toBe(1);
  });

  it("a race over sleep or waitForSignal outside a task is an author error that says what to do", async () => {
    const napper = tool({
      name: "napper",
      description: "",
      input: z.object({}),
      async *run() {
        const got = yield* race({ nap: sleep(10), signal: waitForSignal("x", z.string()) });
        return got.winner;
      },
    });
    await expect(simulate(napper, {}, {}, { paths: how })).rejects.toThrow(/race\(\) over sleep or waitForSignal waits only inside a task/);
  });

  it("all() over steps: at most `concurrency` at once, values by position, each step once", async () => {
    let now = 0;
    let most = 0;
    const runs: number[] = [];
    const fanOut = tool({
      name: "fan_out",
      description: "",
      input: z.object({}),
      async *run() {
        const values = yield* all(
          [1, 2, 3, 4, 5, 6, 7].map((n) =>
            step(`n${n}`, async () => {
              runs.push(n);
              most = Math.max(most, ++now);
              // Later steps finish first: the journal still records them in the order given.
              await new Promise((r) => setTimeout(r, (8 - n) * 3));
              now--;
              return n * 10;
            }),
          ),
          { concurrency: 3 },
        );
        const ok = yield* elicit("Sum?", Confirm);
        return `${values.join(",")} ${ok.action}`;
      },
    });
    const sim = await simulate(fanOut, {}, { "elicit-0": accept({ ok: true }) }, { paths: how });
    expect(sim.result.content).toEqual([{ type: "text", text: "10,20,30,40,50,60,70 accept" }]);
    expect(most).toBe(3);
    expect(runs.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it("a step that throws in all() fails the call as a lone step would, and the others are aborted", async () => {
    let aborted = 0;
    const failing = tool({
      name: "failing",
      description: "",
      input: z.object({}),
      async *run() {
        yield* all([
          step("wait", (signal) => new Promise((resolve) => signal.addEventListener("abort", () => resolve(++aborted)))),
          step("boom", async () => {
            throw new Error("boom");
          }),
        ]);
        return "never";
      },
    });
    const sim = await simulate(failing, {}, {}, { paths: how, authorErrors: "return" });
    expect(sim.result).toMatchObject({ isError: true });
    expect(String(sim.errors[0]?.error)).toMatch(/boom/);
    expect(aborted).toBe(1);
  });
});
