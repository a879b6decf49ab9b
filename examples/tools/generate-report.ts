import { elicit, form, runAsTask, step, tool, toolError } from "mcp-yield";
import { z } from "zod";
import { sleep } from "./task-fixtures.js";

const Options = form(
  z.object({
    format: z.enum(["pdf", "html"]).describe("Report format"),
    confirm: z.boolean().describe("Spend about three seconds of compute on it?"),
  }),
);

/**
 * A realistic task: asks how the report should look over plain rounds, then renders it as a
 * task (a long step that stops when cancelled), then publishes it exactly once per call.
 */
export const generateReport = tool({
  name: "generate_report",
  description: "Generate a report on a topic: asks for the format, then renders it as a task",
  input: z.object({ topic: z.string().min(1).max(200) }),
  task: "optional",
  taskFrom: "runAsTask",
  async *run({ topic }, ctx) {
    const options = yield* elicit(`Generate a report on "${topic}"?`, Options, { key: "options" });
    if (options.action !== "accept" || !options.content.confirm) return toolError("Report cancelled.");
    yield* runAsTask(`Rendering the ${options.content.format} report on "${topic}"`);
    const pages = yield* step("render", async (signal) => {
      await sleep(3000, signal); // stand-in for real work; honours tasks/cancel
      return 3 + (topic.length % 7);
    });
    // Publishing is not idempotent by itself: the key makes a repeated step a no-op upstream.
    const url = yield* step("publish", () => `https://reports.example/${ctx.idempotencyKey("publish").slice(5, 17)}.${options.content.format}`);
    return `Report on "${topic}": ${pages} pages, ${url}`;
  },
});
