import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createMemoryStore, createRuntime, type Store, StoreError, step, tool } from "mcp-yield";
import { createPostgresStore } from "mcp-yield/postgres";
import { testKey } from "../support/keys.js";
import { POSTGRES_URL, postgresAvailable } from "../support/postgres.js";

// Issue 55, point 6: a store failure is visible to the operator — the StoreError, with its
// cause, reaches onError (each distinct failure at most once per 10 s) while the client hears
// "unavailable, try again" — passwords never appear, and a setup no retry can fix
// (store_misconfigured) is told apart from an outage (store_unavailable).

const TASKS = { clientCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } };
const job = tool({
  name: "job",
  description: "",
  input: z.object({}),
  task: "required",
  async *run() {
    return yield* step("work", () => "done");
  },
});

/** A shared store (it has a clock) whose writes fail while `down` is set. */
function flaky(): Store & { down: boolean } {
  const inner = createMemoryStore();
  const store = Object.create(inner) as Store & { down: boolean };
  store.down = false;
  const failing =
    <A extends unknown[], R>(f: (...a: A) => Promise<R>) =>
    (...a: A) =>
      store.down ? Promise.reject(new StoreError("store_unavailable", "Redis did not answer SET within 1000 ms", { cause: new Error("socket timeout") })) : f.apply(inner, a);
  store.add = failing(inner.add);
  store.swap = failing(inner.swap);
  store.addIndexed = failing(inner.addIndexed!);
  store.swapIndexed = failing(inner.swapIndexed!);
  store.set = failing(inner.set);
  store.schedule = failing(inner.schedule);
  store.time = async () => Date.now();
  return store;
}

describe("store failures", () => {
  it("reach onError with their cause, at most once per failure every 10 s; the client hears store_unavailable", async () => {
    const store = flaky();
    let now = 0;
    const errors: unknown[] = [];
    const runtime = createRuntime({ state: { keys: [testKey("se", 3)] }, store, clock: () => now, onError: (e) => errors.push(e) });
    runtime.define([job]);
    store.down = true;
    for (let i = 0; i < 3; i++) {
      const failed = await runtime.callTool(job, { name: "job", arguments: {} }, TASKS).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((failed as { data?: { reason?: string } }).data?.reason).toBe("store_unavailable");
    }
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(StoreError);
    expect(((errors[0] as StoreError).cause as Error).message).toBe("socket timeout");
    now += 10_001;
    await runtime.callTool(job, { name: "job", arguments: {} }, TASKS).catch(() => {});
    expect(errors).toHaveLength(2);
    store.down = false;
    expect(await runtime.callTool(job, { name: "job", arguments: {} }, TASKS)).toMatchObject({ resultType: "task" });
    await runtime.close();
  });

  it.skipIf(!postgresAvailable)("a refused login is store_misconfigured, and no password appears in the message or the cause", async () => {
    const url = new URL(POSTGRES_URL);
    url.username = "no_such_role";
    url.password = "hunter2";
    url.searchParams.set("password", "hunter3");
    const error = (await createPostgresStore({ connectionString: url.toString() }).then(
      () => undefined,
      (e: unknown) => e,
    )) as StoreError;
    expect(error).toBeInstanceOf(StoreError);
    expect(error.reason).toBe("store_misconfigured");
    expect(error.message).toMatch(/role "no_such_role" does not exist — the user, its password or pg_hba.conf refuses this connection/);
    const everything = `${error.message} ${String((error.cause as Error).message)} ${error.stack}`;
    expect(everything).not.toMatch(/hunter/);
  });
});
