import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createMemoryStore, createRuntime, elicit, type Runtime, step, tool } from "mcp-yield";
import { testKey } from "../support/keys.js";

// Each principal's share of the store's bytes: one client's tasks, answers and spilled
// journals cannot fill the store every other client needs. Past its share a principal gets a
// clear -32603 (principal_byte_limit) — a running task ends failed, its steps never running
// again — and other principals go on as before.

const keys = [testKey("b", 3)];
const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } };
const as = (principal: string, caps: Record<string, unknown> = { elicitation: {}, ...TASKS }) => ({ principal, clientCapabilities: caps });
const runtimes: Runtime[] = [];
afterEach(async () => {
  for (const r of runtimes.splice(0)) await r.close();
});
function make(options: Partial<Parameters<typeof createRuntime>[0]> = {}) {
  const store = createMemoryStore();
  const runtime = createRuntime({ state: { keys }, store, onError: () => {}, ...options });
  runtimes.push(runtime);
  return { runtime, store };
}
const refusal = (error: unknown) => ({ code: (error as { code?: number }).code, reason: (error as { data?: { reason?: string } }).data?.reason });

async function settled(runtime: Runtime, taskId: string, principal: string, want = (s: string) => ["completed", "failed", "cancelled"].includes(s)) {
  for (let i = 0; i < 300; i++) {
    const t = (await runtime.getTask({ taskId }, as(principal))) as unknown as Record<string, unknown>;
    if (want(String(t.status))) return t;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`task ${taskId} did not settle`);
}

describe("a principal's share of the store's bytes", () => {
  const keep = tool({
    name: "keep",
    description: "",
    input: z.object({ blob: z.string() }),
    task: "required",
    async *run({ blob }) {
      yield* elicit("Keep it?", z.object({ ok: z.boolean() }), { key: "ok" });
      return String(blob.length);
    },
  });

  /** Mallory starts tasks keeping `blob` until one is refused (at most `most`). */
  async function startUntilRefused(runtime: Runtime, blob: string, most: number) {
    let started = 0;
    for (let i = 0; i < most; i++) {
      try {
        await runtime.callTool(keep, { name: "keep", arguments: { blob } }, as("mallory"));
        started++;
      } catch (error) {
        return { started, refused: error };
      }
    }
    return { started, refused: undefined };
  }

  it("new tasks past the share are refused for that principal only", async () => {
    const { runtime } = make({ maxStoreBytesPerPrincipal: 64 * 1024 });
    const blob = "m".repeat(20_000);
    const { started, refused } = await startUntilRefused(runtime, blob, 10);
    expect(started).toBe(3); // 3 × ~20 KB fit in 64 KiB; the 4th would not
    expect(refusal(refused)).toEqual({ code: -32603, reason: "principal_byte_limit" });
    const alice = (await runtime.callTool(keep, { name: "keep", arguments: { blob } }, as("alice"))) as { taskId: string };
    expect(alice.taskId).toBeTypeOf("string");
  });

  it("answers past the share are refused (the task keeps waiting); a smaller answer is taken", async () => {
    const { runtime } = make({ maxStoreBytesPerPrincipal: 32 * 1024 });
    const ask = tool({
      name: "ask",
      description: "",
      input: z.object({}),
      task: "required",
      async *run() {
        const a = yield* elicit("Note?", z.object({ note: z.string() }), { key: "note" });
        return a.action === "accept" ? String(a.content.note.length) : "declined";
      },
    });
    const { taskId } = (await runtime.callTool(ask, { name: "ask", arguments: {} }, as("mallory"))) as { taskId: string };
    await settled(runtime, taskId, "mallory", (s) => s === "input_required");
    const big = { taskId, inputResponses: { note: { action: "accept", content: { note: "n".repeat(40_000) } } } };
    expect(refusal(await runtime.updateTask(big, as("mallory")).catch((e: unknown) => e))).toEqual({ code: -32603, reason: "principal_byte_limit" });
    expect((await runtime.getTask({ taskId }, as("mallory"))).status).toBe("input_required");
    await runtime.updateTask({ taskId, inputResponses: { note: { action: "accept", content: { note: "short" } } } }, as("mallory"));
    const done = await settled(runtime, taskId, "mallory");
    expect((done.result as { content: Array<{ text: string }> }).content[0]!.text).toBe("5");
  });

  it("a running task whose steps pass the share ends failed with the reason; no step runs twice", async () => {
    const { runtime } = make({ maxStoreBytesPerPrincipal: 64 * 1024 });
    const runs = new Map<string, number>();
    const grow = tool({
      name: "grow",
      description: "",
      input: z.object({}),
      task: "required",
      async *run(_i, ctx) {
        for (let i = 0; i < 6; i++) {
          yield* step(`chunk${i}`, () => {
            runs.set(ctx.idempotencyKey(`chunk${i}`), (runs.get(ctx.idempotencyKey(`chunk${i}`)) ?? 0) + 1);
            return "c".repeat(20_000);
          });
        }
        return "all kept";
      },
    });
    const { taskId } = (await runtime.callTool(grow, { name: "grow", arguments: {} }, as("mallory"))) as { taskId: string };
    const done = await settled(runtime, taskId, "mallory");
    await runtime.idle();
    expect(done.status).toBe("failed");
    expect(done.error).toMatchObject({ code: -32603, data: { reason: "principal_byte_limit" } });
    expect(runs.size).toBeGreaterThanOrEqual(3);
    expect(runs.size).toBeLessThan(6);
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
  });

  it("a journal past spillBytes travels in the token once the principal's share is used; others' still spill", async () => {
    // 11 KiB: room for one ~6 KB spill, not two. The rounds' own records (the inline journal's
    // round keeps a ~9 KB response) are counted apart against the same size, and fit it.
    const { runtime, store } = make({ maxStoreBytesPerPrincipal: 11 * 1024, spillBytes: 1024, state: { keys, maxTokenBytes: 256 * 1024 } });
    const big = tool({
      name: "big",
      description: "",
      input: z.object({}),
      async *run() {
        const blob = yield* step("blob", () => "b".repeat(6_000));
        yield* elicit("More?", z.object({ ok: z.boolean() }), { key: "a" });
        yield* elicit("Again?", z.object({ ok: z.boolean() }), { key: "b" });
        return String(blob.length);
      },
    });
    const yes = { action: "accept", content: { ok: true } };
    const walk = async (principal: string) => {
      const sizes: number[] = [];
      let r = (await runtime.callTool(big, { name: "big", arguments: {} }, as(principal, { elicitation: {} }))) as Record<string, unknown>;
      while (r.resultType === "input_required") {
        sizes.push(String(r.requestState).length);
        const key = Object.keys(r.inputRequests as object)[0]!;
        r = (await runtime.callTool(big, { name: "big", arguments: {}, requestState: r.requestState, inputResponses: { [key]: yes } }, as(principal, { elicitation: {} }))) as Record<string, unknown>;
      }
      return { sizes, result: r };
    };
    const before = store.bytes;
    const mallory = await walk("mallory");
    // The first spill (~6 KB) fits the 11 KiB share; the second round's journal travels inline.
    expect(mallory.result).toMatchObject({ content: [{ text: "6000" }] });
    expect(mallory.sizes[0]).toBeLessThan(2_000);
    expect(mallory.sizes[1]).toBeGreaterThan(6_000);
    const alice = await walk("alice");
    expect(alice.result).toMatchObject({ content: [{ text: "6000" }] });
    expect(alice.sizes[0]).toBeLessThan(2_000);
    expect(store.bytes).toBeGreaterThan(before);
  });

  it("on the default memory store with default shares, one principal cannot lock the others out", async () => {
    const { runtime, store } = make();
    const blob = "x".repeat(1_000_000); // near the default 1 MiB argument bound
    const { started, refused } = await startUntilRefused(runtime, blob, 100);
    expect(refusal(refused)).toEqual({ code: -32603, reason: "principal_byte_limit" });
    expect(started).toBe(16); // 16 MiB share, ~1 MB each
    expect(store.bytes).toBeLessThan(20 * 1024 * 1024);
    // Everyone else: tasks start and foreground rounds are redeemed and answered.
    for (const who of ["alice", "bob", "carol"]) {
      const t = (await runtime.callTool(keep, { name: "keep", arguments: { blob } }, as(who))) as { taskId: string };
      expect(t.taskId).toBeTypeOf("string");
    }
    const fg = tool({
      name: "fg",
      description: "",
      input: z.object({}),
      async *run() {
        const a = yield* elicit("ok?", z.object({ ok: z.boolean() }), { key: "ok" });
        return a.action;
      },
    });
    const first = (await runtime.callTool(fg, { name: "fg", arguments: {} }, as("alice", { elicitation: {} }))) as { requestState: string };
    const done = await runtime.callTool(
      fg,
      { name: "fg", arguments: {}, requestState: first.requestState, inputResponses: { ok: { action: "accept", content: { ok: true } } } },
      as("alice", { elicitation: {} }),
    );
    expect(done).toMatchObject({ content: [{ text: "accept" }] });
  });
});
