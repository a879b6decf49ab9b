import { all, listRoots, sample, tool } from "mcp-yield";
import { z } from "zod";

export const workspaceSummary = tool({
  name: "workspace_summary",
  description: "Summarize the client's workspace: asks for its roots and a model summary in one round",
  input: z.object({}),
  *run() {
    const { roots, summary } = yield* all({
      roots: listRoots({ key: "roots" }),
      summary: sample(
        {
          messages: [{ role: "user", content: { type: "text", text: "Summarize this workspace in one sentence." } }],
          maxTokens: 200,
        },
        { key: "summary" },
      ),
    });
    const first = roots[0]?.uri ?? "(no roots)";
    const text = Array.isArray(summary.content) ? summary.content.map((c) => ("text" in c ? c.text : "")).join(" ") : "text" in summary.content ? summary.content.text : "";
    return `Workspace ${first}: ${text}`;
  },
});
