import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createRuntime, elicit, patched, type Runtime, step, tool, type ToolDefinition } from "mcp-yield";
import { accept } from "mcp-yield/testing";
import { testKey } from "../support/keys.js";
import { closedAfterEach, until } from "../support/instances.js";
import { storesOf } from "../support/stores.js";

// Issue 55, point 5: a rolling deploy. Instances of the old code (v1) and of the new (v2) share
// one store; every request — each round of a call, each tasks/get and tasks/update — goes to an
// instance picked at random, in both directions. What an instance cannot run (a version it does
// not have, a patch it does not make) it hands back (`code_unknown`, retryable) and the client
// sends the same request again; a task it cannot run it leaves to an instance that can. Counted:
// dropped answers, failed tasks, calls whose result is not what their answers call for — 0 each.

const { stores } = storesOf("rolling-deploy");
const open = closedAfterEach();
const keys = [testKey("rd", 23)];
const info = { clientCapabilities: { elicitation: {}, extensions: { "io.modelcontextprotocol/tasks": {} } } };
const Qty = z.object({ qty: z.number() });
const Yes = z.object({ yes: z.boolean() });

/** The order tool of one deployment: v2 asks about gift wrap, for calls that begin under it. */
function orderTool(v2: boolean, task: boolean): ToolDefinition {
  return tool({
    name: task ? "order_task" : "order",
    description: "",
    input: z.object({ item: z.string() }),
    task: task ? "required" : "never",
    async *run({ item }) {
      const qty = yield* elicit(`How many ${item}?`, Qty, { key: "qty" });
      const n = qty.action === "accept" ? qty.content.qty : 0;
      const price = yield* step("price", () => n * 3);
      let wrap = "";
      if (v2 && (yield* patched("gift-wrap"))) {
        const w = yield* elicit("Gift wrap?", Yes, { key: "wrap" });
        wrap = w.action === "accept" && w.content.yes ? " wrapped" : " plain";
      }
      const ok = yield* elicit(`Pay ${price}?`, Yes, { key: "pay" });
      return `${ok.action === "accept" && ok.content.yes ? "ordered" : "cancelled"} ${n} ${item}${wrap}`;
    },
  });
}

/** A tool whose versions differ: calls of each version finish on instances of that version. */
function versionedTool(version: "1" | "2"): ToolDefinition {
  return tool({
    name: "label",
    description: "",
    input: z.object({}),
    version,
    async *run() {
      const a = yield* elicit("Label?", z.object({ text: z.string() }), { key: "text" });
      const b = yield* step("stamp", () => `v${version}`);
      const c = yield* elicit("Sure?", Yes, { key: "sure" });
      return `${a.action === "accept" ? a.content.text : "-"} ${b} ${c.action === "accept"}`;
    },
  });
}

const ANSWERS: Record<string, unknown> = { qty: accept({ qty: 2 }), wrap: accept({ yes: true }), pay: accept({ yes: true }), text: accept({ text: "fragile" }), sure: accept({ yes: true }) };
const answerOf = (key: string) => ANSWERS[key.replace(/~\d+$/, "")];

type Instance = { runtime: Runtime; defs: Map<string, ToolDefinition>; v2: boolean };
const reasonOf = (e: unknown) => (e as { data?: { reason?: string } }).data?.reason;

describe.each(stores)("a rolling deploy on %s: v1 and v2 instances, requests routed at random", (name, make) => {
  it("every call and task completes with the result its answers call for: none dropped, none failed", async () => {
    const store = await make();
    open.push(store);
    const instances: Instance[] = [];
    for (const v2 of [false, true, false, true]) {
      const on = name === "memory" ? store : await make();
      if (on !== store) open.push(on);
      const runtime = createRuntime({ state: { keys }, store: on, onError: () => {}, tasks: { leaseMs: 1000, sweepMs: 20 } });
      open.push(runtime);
      const defs = [orderTool(v2, false), orderTool(v2, true), versionedTool(v2 ? "2" : "1")];
      runtime.define(defs);
      instances.push({ runtime, defs: new Map(defs.map((d) => [d.name, d])), v2 });
    }
    let handedBack = 0;
    /**
     * Send to a random instance until one can run it (code_unknown: another may), and again
     * after a store that did not answer in time (store_unavailable, on a loaded machine), as the
     * client loop does: the same request, which the server answers once.
     */
    const routed = async <T>(send: (i: Instance) => Promise<T>): Promise<{ value: T; by: Instance }> => {
      for (let tries = 0; ; tries++) {
        const by = instances[Math.floor(Math.random() * instances.length)]!;
        try {
          return { value: await send(by), by };
        } catch (error) {
          const reason = reasonOf(error);
          if ((reason !== "code_unknown" && reason !== "store_unavailable") || tries > 60) throw error;
          if (reason === "code_unknown") handedBack++;
          else await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    };

    // Whether a call was asked about gift wrap: the v2 code reached the patch first (where the
    // call was when it got there decides, not where it began) — its answer must then show.
    const foreground = async (tool: string, args: Record<string, unknown>) => {
      let params: Record<string, unknown> = { name: tool, arguments: args };
      let started: Instance | undefined;
      let wrapAsked = false;
      for (;;) {
        const { value, by } = await routed((i) => i.runtime.callTool(i.defs.get(tool)!, params, info) as Promise<Record<string, unknown>>);
        started ??= by;
        if (value.resultType !== "input_required") return { text: (value.content as Array<{ text: string }>)[0]!.text, startedOnV2: started.v2, wrapAsked };
        const asks = value.inputRequests as Record<string, unknown>;
        if ("wrap" in asks) wrapAsked = true;
        params = { name: tool, arguments: args, requestState: value.requestState, inputResponses: Object.fromEntries(Object.keys(asks).map((k) => [k, answerOf(k)])) };
      }
    };

    const asTask = async (args: Record<string, unknown>) => {
      const { value, by } = await routed((i) => i.runtime.callTool(i.defs.get("order_task")!, { name: "order_task", arguments: args }, info) as Promise<{ taskId: string }>);
      const taskId = value.taskId;
      let wrapAsked = false;
      const done = await until(async () => {
        const { value: t } = await routed((i) => i.runtime.getTask({ taskId }, info) as unknown as Promise<Record<string, unknown>>);
        if (t.status === "input_required") {
          const asks = t.inputRequests as Record<string, unknown>;
          if (Object.keys(asks).some((k) => k.startsWith("wrap"))) wrapAsked = true;
          await routed((i) => i.runtime.updateTask({ taskId, inputResponses: Object.fromEntries(Object.keys(asks).map((k) => [k, answerOf(k)])) }, info));
          return undefined;
        }
        return t.status === "working" ? undefined : t;
      }, 30_000);
      expect(done.status).toBe("completed");
      return { text: (done.result as { content: Array<{ text: string }> }).content[0]!.text, startedOnV2: by.v2, wrapAsked };
    };

    const calls = await Promise.all([...Array.from({ length: 12 }, () => foreground("order", { item: "mugs" })), ...Array.from({ length: 8 }, () => asTask({ item: "plates" }))]);
    for (const call of calls.slice(0, 12)) expect(call.text).toBe(`ordered 2 mugs${call.wrapAsked ? " wrapped" : ""}`);
    for (const call of calls.slice(12)) expect(call.text).toBe(`ordered 2 plates${call.wrapAsked ? " wrapped" : ""}`);
    // Calls took both branches (else the deploy was not tried both ways).
    expect(new Set(calls.map((c) => c.wrapAsked)).size).toBe(2);
    // A version bump: each version's calls finish on that version's instances.
    const labels = await Promise.all(Array.from({ length: 8 }, () => foreground("label", {})));
    for (const l of labels) expect(l.text).toBe(`fragile v${l.startedOnV2 ? "2" : "1"} true`);
    expect(handedBack).toBeGreaterThan(0);
  }, 90_000);
});
