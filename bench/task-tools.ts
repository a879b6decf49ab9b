import { step, tool } from "mcp-yield";
import { z } from "zod";

// Tools the operator benches (bulk.ts, list.ts) start as tasks.

/** A task tool that returns at once: `name` names it. */
export const returning = (name: string) =>
  tool({
    name,
    description: "",
    input: z.object({}),
    task: "required",
    async *run() {
      return name;
    },
  });

/** A task tool whose one step fails on its one attempt: the task is held for an operator. */
export const failing = tool({
  name: "failing",
  description: "",
  input: z.object({}),
  task: "required",
  async *run() {
    yield* step(
      "down",
      () => {
        throw new Error("down");
      },
      { retry: { attempts: 1 } },
    );
    return "never";
  },
});
