import type { z } from "zod";

/** One line naming every failing field, e.g. `params.requestedSchema.type: expected "object"`. */
export function describeZodError(error: z.ZodError, root = ""): string {
  return error.issues
    .map((issue) => {
      const path = [root, ...issue.path.map(String)].filter((p) => p !== "").join(".");
      return `${path === "" ? "(root)" : path}: ${issue.message}`;
    })
    .join("; ");
}
