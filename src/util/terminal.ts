// What the CLI prints goes to an operator's terminal, and much of it is a client's text (task
// status messages, step results, answers, tool arguments): escape sequences in it would move the
// cursor, rewrite lines or set the window title, and bidirectional overrides would show text in
// another order than it has. Every line is made visible as text first.

/**
 * C0 controls but tab and newline, DEL, C1 controls, and the bidirectional marks, embeddings,
 * overrides and isolates (U+061C, U+200E–U+200F, U+202A–U+202E, U+2066–U+2069).
 */
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** `line` with every character a terminal would act on, or reorder by, written as `\uXXXX`. */
export function terminalSafe(line: string): string {
  return line.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
