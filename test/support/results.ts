// Reading results the way the tests compare them.

/** The text of a result's content parts, joined by `separator` (a missing `content` reads as none). */
export function textOf(result: unknown, separator = ""): string {
  const content = (result as { content?: Array<{ text?: unknown }> } | undefined)?.content ?? [];
  return content.map((c) => (c.text === undefined ? "undefined" : String(c.text))).join(separator);
}

/** The text of a completed task's result (what `tasks/get` inlines). */
export function taskTextOf(task: Record<string, unknown>): string {
  return textOf(task.result);
}
