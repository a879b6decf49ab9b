/**
 * A body's text, read no further than `max` bytes: `undefined` when it is larger (declared in
 * `content-length`, or found while reading — the rest is not read). Whoever sends it cannot make
 * the reader buffer without bound. The rest is cancelled, not awaited: cancelling one branch of a
 * tee (a `request.clone()`) settles only once the other branch is cancelled too, which may never
 * happen — awaiting it hung the read.
 */
export async function readBoundedText(message: { body: ReadableStream<Uint8Array> | null; headers: Headers }, max: number): Promise<string | undefined> {
  const declared = Number(message.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > max) {
    void message.body?.cancel().catch(() => {});
    return undefined;
  }
  if (message.body === null) return "";
  const reader = message.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    bytes += value.byteLength;
    if (bytes > max) {
      void reader.cancel().catch(() => {});
      return undefined;
    }
    text += decoder.decode(value, { stream: true });
  }
}
