import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createClient } from "redis";
import { createRuntime, elicit, step, tool } from "mcp-yield";
import { createRedisStore } from "mcp-yield/redis";
import { redisAvailable, startPrivateRedis } from "../support/redis.js";
import { testKey } from "../support/keys.js";

// The fault as it happens in production, not a wrapper: a Redis server paused (CLIENT PAUSE)
// for 1.5 s while a step runs whose result makes the next state spill to the store. The
// store's writes after the step time out on the client and land when the pause ends; the
// client retries as the errors say and repeats the request besides — and the step has run
// once when the call ends.

const keys = [testKey("p", 21)];
const caps = { clientCapabilities: { elicitation: {} } };
const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

const reasonOf = (error: unknown) => (error as { data?: { reason?: string } }).data?.reason;

describe.skipIf(!redisAvailable)("Redis paused inside a step (a real server, CLIENT PAUSE)", () => {
  it("the repeat of the request does not run the step again: it gets the round's result once the server is back", async () => {
    const redis = await startPrivateRedis();
    cleanup.push(redis.stop);
    const admin = createClient({ url: redis.url });
    admin.on("error", () => {});
    await admin.connect();
    cleanup.push(() => admin.close());
    const store = await createRedisStore({ url: redis.url, timeoutMs: 500 });
    const runtime = createRuntime({ state: { keys, maxTokenBytes: 64 * 1024 }, store, onError: () => {} });
    cleanup.push(
      () => store.close(),
      () => runtime.close(),
    );

    const charges: string[] = [];
    const pay = tool({
      name: "pay",
      description: "",
      input: z.object({}),
      async *run(_i, ctx) {
        yield* elicit("Pay 10?", z.object({ ok: z.boolean() }), { key: "ok" });
        const receipt = yield* step("charge", async () => {
          charges.push(ctx.idempotencyKey("charge"));
          await admin.sendCommand(["CLIENT", "PAUSE", "1500", "ALL"]);
          // A receipt past spillBytes: the next state's journal goes to the (paused) store.
          return { id: `R-${charges.length}`, pdf: "x".repeat(20_000) };
        });
        const mail = yield* elicit(`Email receipt ${receipt.id}?`, z.object({ ok: z.boolean() }), { key: "mail" });
        return `${receipt.id} ${mail.action}`;
      },
    });

    const first = (await runtime.callTool(pay, { name: "pay", arguments: {} }, caps)) as { requestState: string };
    const answer = { name: "pay", arguments: {}, requestState: first.requestState, inputResponses: { ok: { action: "accept", content: { ok: true } } } };
    const started = Date.now();
    /** The client: send, and retry only what the errors say may be retried. */
    const send = async (told: string[]) => {
      for (let attempt = 0; attempt < 200; attempt++) {
        try {
          return await runtime.callTool(pay, answer, caps);
        } catch (error) {
          const reason = reasonOf(error);
          told.push(String(reason));
          if (reason !== "store_unavailable" && reason !== "round_in_progress") throw error;
          await new Promise((r) => setTimeout(r, 20));
        }
      }
      throw new Error("no result after 200 attempts");
    };
    const told: string[] = [];
    const result = await send(told);
    const firstMs = Date.now() - started;
    // The response reached the client, or the client was told to retry; either way, it (or a
    // proxy that lost the response) sends the same request again while the server is paused.
    const repeat = await send(told);
    console.log(`first answered after ${firstMs} ms; errors on the way: ${told.join(", ") || "none"}`);
    expect(result).toMatchObject({ resultType: "input_required", inputRequests: { mail: {} } });
    expect(repeat).toEqual(result);
    const state = (result as { requestState: string }).requestState;
    const done = await runtime.callTool(pay, { ...answer, requestState: state, inputResponses: { mail: { action: "accept", content: { ok: true } } } }, caps);
    expect(done).toMatchObject({ content: [{ type: "text", text: "R-1 accept" }] });
    expect(charges).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
