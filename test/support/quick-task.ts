import { tool } from "mcp-yield";
import { z } from "zod";

/** A task tool that does nothing and ends "ok" at once: for tests of a task's bookkeeping (shares, lifetimes, expiry). */
export const quickTask = tool({
  name: "quick",
  description: "",
  input: z.object({}),
  task: "required",
  *run() {
    return "ok";
  },
});
