// util/sse.ts owns reading a server-sent-events body: the `data` of each event, in order, and a
// frame format for writing one. Only what MCP's Streamable HTTP uses: `data:` lines (joined by
// "\n"), other fields and comments (a keep-alive) skipped.

/** An event's data longer than this ends the stream with an error (a peer cannot make the reader buffer without bound). */
export const MAX_SSE_EVENT_BYTES = 16 * 1024 * 1024;

/** The `data` of each event of `body`, as it arrives; throws when one is longer than `maxEventBytes`. */
export async function* sseData(body: ReadableStream<Uint8Array>, maxEventBytes = MAX_SSE_EVENT_BYTES): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      for (let end = eventEnd(buffer); end !== undefined; end = eventEnd(buffer)) {
        const data = dataOf(buffer.slice(0, end.at));
        buffer = buffer.slice(end.at + end.length);
        if (data !== undefined) yield data;
      }
      if (buffer.length > maxEventBytes) throw new Error(`an event of the stream is longer than ${maxEventBytes} bytes`);
    }
    const data = dataOf(buffer + decoder.decode());
    if (data !== undefined) yield data;
  } finally {
    reader.cancel().catch(() => {});
  }
}

/** Where the first event of `text` ends (a blank line, in any of the three line-end styles). */
function eventEnd(text: string): { at: number; length: number } | undefined {
  const match = /\r\n\r\n|\n\n|\r\r/.exec(text);
  return match === null ? undefined : { at: match.index, length: match[0].length };
}

/** The data of one event's lines, `undefined` when it has none (a comment, a keep-alive). */
function dataOf(event: string): string | undefined {
  const lines = event.split(/\r\n|\n|\r/).filter((line) => line === "data" || line.startsWith("data:"));
  if (lines.length === 0) return undefined;
  return lines.map((line) => line.slice(5).replace(/^ /, "")).join("\n");
}

/** One event carrying `message` as JSON (what MCP servers send). */
export const sseFrame = (message: unknown): string => `event: message\ndata: ${JSON.stringify(message)}\n\n`;
