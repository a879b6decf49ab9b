import { describe, expect, it } from "vitest";
import { z } from "zod";
import { all, createMemoryStore, createRuntime, createTaskAdmin, progress, race, sleep, step, tool, waitForSignal } from "mcp-yield";
import { closedAfterEach, until } from "../support/instances.js";
import { testKey } from "../support/keys.js";

// Issue 56, point 7: `tasks show` (and `inspect`) names every record of a durable task's
// journal — steps, attempts, sleeps, signals, progress, races, steps at once — with ISO times,
// not "an effect (ask #N)" and epoch milliseconds.

const open = closedAfterEach();
const info = { clientCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } };

describe("a durable task's journal in words", () => {
  it("names every record, times as ISO times", async () => {
    const store = createMemoryStore();
    const runtime = createRuntime({ state: { keys: [testKey("d", 31)] }, store, onError: () => {}, tasks: { sweepMs: 20 } });
    open.push(runtime);
    let token = "";
    let tries = 0;
    const durable = tool({
      name: "durable",
      description: "",
      input: z.object({}),
      task: "required",
      async *run(_i, ctx) {
        yield* step("quote", () => 42);
        yield* step(
          "charge",
          () => {
            if (++tries < 2) throw new Error("card service down");
            return "R-1";
          },
          { retry: { attempts: 3, initialMs: 5 } },
        );
        yield* progress("charged");
        yield* sleep(5);
        token = ctx.signalToken("go");
        yield* waitForSignal("go", z.string());
        yield* race({ late: sleep(60_000), now: step("fast", () => "F") });
        yield* all([step("a", () => 1), step("b", () => 2)]);
        return "done";
      },
    });
    runtime.define([durable]);
    const { taskId } = (await runtime.callTool(durable, { name: "durable", arguments: {} }, info)) as { taskId: string };
    await until(async () => token || undefined);
    await until(async () =>
      (await runtime
        .signal(token, "yes")
        .then(() => true)
        .catch(() => undefined))
        ? true
        : undefined,
    );
    await until(async () => ((await runtime.getTask({ taskId }, info)).status === "completed" ? true : undefined));
    const shown = (await createTaskAdmin({ store }).show(taskId))!;
    const lines = shown.journal.map((r) => `${r.effect} → ${r.value}`);
    const iso = "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z";
    expect(lines).toEqual([
      'step("quote") → 42',
      'an attempt of step("charge") → failed: Error: card service down',
      expect.stringMatching(new RegExp(`^sleep\\(\\) → until ${iso}$`)),
      'an attempt of step("charge") → ok "R-1"',
      "progress() → reported",
      expect.stringMatching(new RegExp(`^sleep\\(\\) → until ${iso}$`)),
      expect.stringMatching(/^waitForSignal\("go"\) → .*yes/),
      expect.stringMatching(new RegExp(`^race\\(\\) begins \\(race-0\\) → timers late at ${iso}$`)),
      expect.stringMatching(/^race\(\) \(its winner\) → won by "now": "F"$/),
      // Steps at once are recorded as the sequential code would be: one record each.
      'step("a") → 1',
      'step("b") → 2',
    ]);
    expect(lines.join("\n")).not.toMatch(/an effect|ask #|\b1[789]\d{11}\b/);
  });
});
