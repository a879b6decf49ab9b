import { sample, tool } from "mcp-yield";
import { z } from "zod";

export const summarize = tool({
  name: "summarize",
  description: "Summarize a text with the client's model",
  input: z.object({ text: z.string() }),
  *run({ text }) {
    const reply = yield* sample({ messages: [{ role: "user", content: { type: "text", text: `Summarize: ${text}` } }], maxTokens: 200 });
    // A model's reply is one content block or an array of blocks.
    const blocks = Array.isArray(reply.content) ? reply.content : [reply.content];
    return blocks.map((block) => (block.type === "text" ? block.text : "")).join("");
  },
});
