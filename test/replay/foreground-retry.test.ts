import { describe, expect, it } from "vitest";
import { z } from "zod";
import { elicit, step, tool } from "mcp-yield";
import { accept, type SimulatedPaths, simulate } from "mcp-yield/testing";

// Issue 56, point 6: a retried step does not need a task when its delays are short. In a
// foreground round the delays (≤ 1 s in all) are waited out in process and recorded, so the
// next round — resumed, or replayed on another instance — passes them at once and runs no
// attempt again; a longer backoff is an author error that names exactly that.

const Ok = z.object({ ok: z.boolean() });

function flaky(runs: number[], retry: { attempts: number; initialMs: number; factor?: number }) {
  return tool({
    name: "flaky",
    description: "",
    input: z.object({}),
    async *run(_i, ctx) {
      const quote = yield* step(
        "quote",
        (_signal, attempt) => {
          runs.push(attempt);
          if (attempt < 3) throw new Error(`busy (attempt ${attempt})`);
          return `Q-${ctx.idempotencyKey("quote").length}`;
        },
        { retry },
      );
      const ok = yield* elicit(`Pay ${quote}?`, Ok, { key: "pay" });
      return `${quote} ${ok.action === "accept" && ok.content.ok ? "paid" : "kept"}`;
    },
  });
}

describe.each<SimulatedPaths>(["replay", "resume", "both"])("a retried step in a foreground call (%s)", (paths) => {
  it("retries in process within 1 s of delays; the next round runs no attempt again", async () => {
    const runs: number[] = [];
    const started = performance.now();
    const sim = await simulate(flaky(runs, { attempts: 3, initialMs: 40, factor: 2 }), {}, { pay: accept({ ok: true }) }, { paths });
    expect(performance.now() - started).toBeGreaterThanOrEqual(40 + 80 - 5);
    expect(sim.result.content).toEqual([{ type: "text", text: expect.stringMatching(/^Q-\d+ paid$/) }]);
    expect(sim.rounds).toHaveLength(1);
    expect(runs).toEqual([1, 2, 3]);
  });

  it("delays adding up past 1 s need a task: the error says so, naming the step and the fixes", async () => {
    const runs: number[] = [];
    await expect(simulate(flaky(runs, { attempts: 3, initialMs: 400, factor: 2 }), {}, { pay: accept({ ok: true }) }, { paths })).rejects.toThrow(
      /step\("quote"\) retries with delays adding up to 1200 ms; a foreground call waits at most 1000 ms in all between attempts: run it in a task \(call runAsTask\(\) before it, or make the tool task: "required"\), or shorten its retry/,
    );
    // The first attempt ran; no delay was waited, no second attempt made.
    expect(runs).toEqual([1]);
  });
});
