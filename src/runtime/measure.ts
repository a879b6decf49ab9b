/**
 * The approximate JSON size and the nesting depth of a value, walked iteratively (a client can
 * send nesting deep enough to overflow a recursive walk) and abandoned as soon as either limit
 * is passed, so measuring a hostile value costs no more than the limits allow.
 */
export function exceedsJsonLimits(value: unknown, maxBytes: number, maxDepth: number): "size" | "depth" | undefined {
  let bytes = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (depth > maxDepth) return "depth";
    if (typeof v === "string") bytes += v.length + 2;
    else if (v === null || typeof v !== "object") bytes += 8;
    else if (Array.isArray(v)) {
      bytes += 2 + v.length;
      for (const item of v) stack.push([item, depth + 1]);
    } else {
      for (const key of Object.keys(v)) {
        bytes += key.length + 4;
        stack.push([(v as Record<string, unknown>)[key], depth + 1]);
      }
      bytes += 2;
    }
    if (bytes > maxBytes) return "size";
  }
  return undefined;
}
