import { elicit, resourceTemplate, step } from "mcp-yield";
import { z } from "zod";

export const note = resourceTemplate({
  uriTemplate: "notes://{folder}/{+path}", // {name}: one path segment; {+name}: may contain "/"
  name: "note",
  mimeType: "text/markdown",
  *run({ folder, path }, uri) {
    const text = yield* step("read", () => `# ${path} in ${folder}`); // folder, path: string
    const ok = yield* elicit(`Show ${uri}?`, z.object({ show: z.boolean() }), { key: "show" });
    return ok.action === "accept" && ok.content.show ? text : "(hidden)";
  },
});
