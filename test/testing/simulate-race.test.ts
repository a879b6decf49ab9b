import { describe, expect, it } from "vitest";
import { z } from "zod";
import { all, elicit, race, sleep, step, tool, waitForSignal } from "mcp-yield";
import { accept, noAnswer, type SimulatedPaths, simulate } from "mcp-yield/testing";

// simulate() scripts races (which branch wins: a scripted signal, an answer, `noAnswer` to leave
// an ask to another branch, the fake clock for a timer) and parallel steps, every round served
// resumed and replayed (`paths: "both"` replays each round as another instance and compares).

const tasks = { elicitation: {}, extensions: { "io.modelcontextprotocol/tasks": {} } };
const Approval = z.object({ approved: z.boolean() });
const Confirm = z.object({ ok: z.boolean() });

/** A task: an approval by signal, or by the requester's own answer, or a day passes. */
const approveOrExpire = tool({
  name: "approve_or_expire",
  description: "",
  input: z.object({}),
  task: "required",
  async *run() {
    const first = yield* race({
      signal: waitForSignal("approval", Approval),
      asked: elicit("Approve?", Confirm),
      expired: sleep(1_800_000),
    });
    if (first.winner === "signal") return first.value.status === "received" && first.value.value.approved ? "approved by signal" : "rejected by signal";
    if (first.winner === "asked") return first.value.action === "accept" && first.value.content.ok ? "approved by answer" : "rejected by answer";
    return "expired";
  },
});

/** In the foreground: two asks race; whichever the client answers wins. */
const eitherAsk = tool({
  name: "either_ask",
  description: "",
  input: z.object({}),
  async *run() {
    const first = yield* race({ left: elicit("Left?", Confirm), right: elicit("Right?", Confirm) });
    return `${first.winner}:${first.value.action}`;
  },
});

const paths: SimulatedPaths[] = ["replay", "resume", "both"];

describe.each(paths)("simulate races (%s)", (how) => {
  it("a scripted signal wins over an ask left unanswered and a timer", async () => {
    const sim = await simulate(approveOrExpire, {}, { "race-0.asked": noAnswer }, { capabilities: tasks, signals: { approval: { approved: true } }, paths: how });
    expect(sim.result.content).toEqual([{ type: "text", text: "approved by signal" }]);
    expect(sim.task).toMatchObject({ signals: 1, sleptMs: 0 });
  });

  it("an answer wins when one is scripted", async () => {
    const sim = await simulate(approveOrExpire, {}, { "race-0.asked": accept({ ok: true }) }, { capabilities: tasks, paths: how });
    expect(sim.result.content).toEqual([{ type: "text", text: "approved by answer" }]);
    expect(sim.task).toMatchObject({ signals: 0, sleptMs: 0 });
  });

  it("the timer wins when nothing else is scripted: the fake clock moves to it", async () => {
    const sim = await simulate(approveOrExpire, {}, { "race-0.asked": noAnswer }, { capabilities: tasks, paths: how });
    expect(sim.result.content).toEqual([{ type: "text", text: "expired" }]);
    expect(sim.task).toMatchObject({ signals: 0, sleptMs: 1_800_000 });
  });

  it("in the foreground, the ask the client answers wins", async () => {
    const right = await simulate(eitherAsk, {}, { "race-0.left": noAnswer, "race-0.right": accept({ ok: true }) }, { paths: how });
    expect(right.result.content).toEqual([{ type: "text", text: "right:accept" }]);
    // Both answered in one round: the first branch in order wins.
    const both = await simulate(eitherAsk, {}, { "race-0.left": accept({ ok: false }), "race-0.right": accept({ ok: true }) }, { paths: how });
    expect(both.result.content).toEqual([{ type: "text", text: "left:accept" }]);
  });

  it("parallel steps: each runs once, values by slot, the journal in the order given", async () => {
    const ran: string[] = [];
    const fetchAll = tool({
      name: "fetch_all",
      description: "",
      input: z.object({}),
      async *run() {
        const got = yield* all(
          {
            slow: step("slow", async () => {
              ran.push("slow");
              await new Promise((r) => setTimeout(r, 30));
              return 1;
            }),
            fast: step("fast", () => {
              ran.push("fast");
              return 2;
            }),
          },
          { concurrency: 2 },
        );
        const ok = yield* elicit("Sum?", Confirm);
        return `${got.slow + got.fast} ${ok.action}`;
      },
    });
    const sim = await simulate(fetchAll, {}, { "elicit-0": accept({ ok: true }) }, { paths: how });
    expect(sim.result.content).toEqual([{ type: "text", text: "3 accept" }]);
    expect(ran.sort()).toEqual(["fast", "slow"]);
  });
});
