/**
 * The approximate JSON size and the nesting depth of a value, walked iteratively (a client can
 * send nesting deep enough to overflow a recursive walk) and abandoned as soon as either limit
 * is passed, so measuring a hostile value costs no more than the limits allow.
 */
export function exceedsJsonLimits(value: unknown, maxBytes: number, maxDepth: number): "size" | "depth" | undefined {
  const measured = jsonBytesWithin(value, maxBytes, maxDepth);
  return typeof measured === "number" ? undefined : measured;
}

/** `value`'s approximate JSON size in bytes, or which limit it passes (as `exceedsJsonLimits`). */
export function jsonBytesWithin(value: unknown, maxBytes: number, maxDepth: number): number | "size" | "depth" {
  let bytes = 0;
  // Two parallel stacks (values and their depths) rather than a [value, depth] pair per node:
  // this runs on every request's arguments and answers.
  const values: unknown[] = [value];
  const depths: number[] = [1];
  while (values.length > 0) {
    const v = values.pop();
    const depth = depths.pop()!;
    if (depth > maxDepth) return "depth";
    if (typeof v === "string") bytes += v.length + 2;
    else if (v === null || typeof v !== "object") bytes += 8;
    else if (Array.isArray(v)) {
      bytes += 2 + v.length;
      for (const item of v) {
        values.push(item);
        depths.push(depth + 1);
      }
    } else {
      // Own enumerable string keys, as Object.keys gives them, without an array per object
      // (this runs on every request's arguments and answers).
      for (const key in v) {
        if (!Object.prototype.hasOwnProperty.call(v, key)) continue;
        bytes += key.length + 4;
        values.push((v as Record<string, unknown>)[key]);
        depths.push(depth + 1);
      }
      bytes += 2;
    }
    if (bytes > maxBytes) return "size";
  }
  return bytes;
}
