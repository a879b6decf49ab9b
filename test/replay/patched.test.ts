import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createRuntime, elicit, patched, type Runtime, step, tool } from "mcp-yield";
import { accept, simulate } from "mcp-yield/testing";
import { testKey } from "../support/keys.js";
import { textOf } from "../support/results.js";

// A tool gains a step and a question in a deployment. Journals minted by the old definition are
// replayed through the new one (on another runtime with the same keys, as another instance).
const keys = [testKey("p", 5)];
const Name = z.object({ name: z.string() });
const Sure = z.object({ sure: z.boolean() });
const caps = { clientCapabilities: { elicitation: {} } };

const log: string[] = [];
const oldTool = tool({
  name: "greet",
  description: "",
  input: z.object({}),
  *run() {
    yield* step("load", () => log.push("load"));
    const a = yield* elicit("Name?", Name);
    const b = yield* elicit("Friend's name?", Name);
    return `old ${a.action === "accept" ? a.content.name : "-"} ${b.action === "accept" ? b.content.name : "-"}`;
  },
});
/** The new deployment: an audit step and a confirmation, for new calls only. */
const newTool = tool({
  name: "greet",
  description: "",
  input: z.object({}),
  *run() {
    yield* step("load", () => log.push("load"));
    const audited = yield* patched("audit-and-confirm");
    if (audited) {
      yield* step("audit", () => log.push("audit"));
      const ok = yield* elicit("Sure?", Sure, { key: "sure" });
      if (ok.action !== "accept" || !ok.content.sure) return "stopped";
    }
    const a = yield* elicit("Name?", Name);
    const b = yield* elicit("Friend's name?", Name);
    return `${audited ? "new" : "old"} ${a.action === "accept" ? a.content.name : "-"} ${b.action === "accept" ? b.content.name : "-"}`;
  },
});
/** Later still: every old call is gone, the patch is deleted (and said so) and its new branch kept. */
const cleanedTool = tool({
  name: "greet",
  description: "",
  input: z.object({}),
  removedPatches: ["audit-and-confirm"],
  *run() {
    yield* step("load", () => log.push("load"));
    yield* step("audit", () => log.push("audit"));
    const ok = yield* elicit("Sure?", Sure, { key: "sure" });
    if (ok.action !== "accept" || !ok.content.sure) return "stopped";
    const a = yield* elicit("Name?", Name);
    const b = yield* elicit("Friend's name?", Name);
    return `new ${a.action === "accept" ? a.content.name : "-"} ${b.action === "accept" ? b.content.name : "-"}`;
  },
});

type Step = { resultType: string; requestState?: string; inputRequests?: Record<string, unknown> };
const instance = (): Runtime => createRuntime({ state: { keys }, liveCalls: 0, verifyReplay: true });
const call = (runtime: Runtime, def: typeof oldTool, requestState?: string, inputResponses?: Record<string, unknown>) =>
  runtime.callTool(def, { name: "greet", arguments: {}, ...(requestState ? { requestState, inputResponses } : {}) }, caps) as Promise<Step>;

describe("patched(): versioned code paths for calls in flight", () => {
  it("a call started before the patch replays the old branch on the new code (mid-journal)", async () => {
    log.length = 0;
    const r1 = await call(instance(), oldTool);
    const r2 = await call(instance(), oldTool, r1.requestState, { "elicit-0": accept({ name: "Ada" }) });
    expect(Object.keys(r2.inputRequests!)).toEqual(["elicit-1"]);
    // Deployed: the next round lands on the new code.
    const done = await call(instance(), newTool, r2.requestState, { "elicit-1": accept({ name: "Bob" }) });
    expect(textOf(done)).toBe("old Ada Bob");
    expect(log).toEqual(["load"]); // no audit: the old branch; the recorded step not run again
  });

  it("a call suspended exactly where the patch now sits goes on in the old branch", async () => {
    log.length = 0;
    const r1 = await call(instance(), oldTool); // waiting for elicit-0 right after "load"
    const r2 = await call(instance(), newTool, r1.requestState, { "elicit-0": accept({ name: "Ada" }) });
    expect(Object.keys(r2.inputRequests!)).toEqual(["elicit-1"]); // not asked "Sure?"
    const done = await call(instance(), newTool, r2.requestState, { "elicit-1": accept({ name: "Bob" }) });
    expect(textOf(done)).toBe("old Ada Bob");
    expect(log).toEqual(["load"]);
  });

  it("a new call takes the new branch, the same resumed and replayed", async () => {
    const answers = { sure: accept({ sure: true }), "elicit-0": accept({ name: "Ada" }), "elicit-1": accept({ name: "Bob" }) };
    for (const paths of ["replay", "resume", "both"] as const) {
      log.length = 0;
      const sim = await simulate(newTool, {}, answers, { paths, runtimeOptions: { state: { keys } } });
      expect(textOf(sim.result)).toBe("new Ada Bob");
      expect(log).toEqual(["load", "audit"]); // each step once, on every path
    }
  });

  it("after the patch is deleted, journals that recorded it still replay (its marker is passed over)", async () => {
    log.length = 0;
    const r1 = await call(instance(), newTool);
    expect(Object.keys(r1.inputRequests!)).toEqual(["sure"]);
    const r2 = await call(instance(), newTool, r1.requestState, { sure: accept({ sure: true }) });
    const r3 = await call(instance(), cleanedTool, r2.requestState, { "elicit-0": accept({ name: "Ada" }) });
    const done = await call(instance(), cleanedTool, r3.requestState, { "elicit-1": accept({ name: "Bob" }) });
    expect(textOf(done)).toBe("new Ada Bob");
    expect(log).toEqual(["load", "audit"]);
  });

  it("mid-deploy, old code handed a journal with a patch it does not make hands it back (code_unknown); the new code then finishes it", async () => {
    log.length = 0;
    const r1 = await call(instance(), newTool);
    const r2 = await call(instance(), newTool, r1.requestState, { sure: accept({ sure: true }) });
    // The next round reaches an instance still on the old code: refused, nothing run, retryable.
    const refused = await instance()
      .callTool(oldTool, { name: "greet", arguments: {}, requestState: r2.requestState, inputResponses: { "elicit-0": accept({ name: "Ada" }) } }, caps)
      .then(
        () => undefined,
        (e: unknown) => e as { code: number; message: string; data: { reason: string } },
      );
    expect(refused).toMatchObject({ code: -32603, data: { reason: "code_unknown" } });
    expect(refused!.message).toContain('patch "audit-and-confirm"');
    // The same request again, on an instance with the new code: the answer is not lost.
    const r3 = await call(instance(), newTool, r2.requestState, { "elicit-0": accept({ name: "Ada" }) });
    const done = await call(instance(), newTool, r3.requestState, { "elicit-1": accept({ name: "Bob" }) });
    expect(textOf(done)).toBe("new Ada Bob");
    expect(log).toEqual(["load", "audit"]);
    // A patch deleted without saying so (no removedPatches) is code this one does not know, too.
    const unsaid = { ...cleanedTool, removedPatches: [] };
    await expect(call(instance(), unsaid, r2.requestState, { "elicit-0": accept({ name: "Ada" }) })).rejects.toMatchObject({ data: { reason: "code_unknown" } });
  });

  it("refuses an id it could not record", () => {
    expect(() => patched("").next()).toThrow(TypeError);
    expect(() => patched("a\tb").next()).toThrow(/without tabs or line breaks/);
  });
});
