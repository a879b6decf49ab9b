// The state keys the tests seal with: fixed bytes, so a failure reproduces.

/** A state key with id `id` whose 32 secret bytes are all `fill`. */
export function testKey(id = "t", fill = 5): { id: string; secret: Uint8Array } {
  return { id, secret: new Uint8Array(32).fill(fill) };
}
