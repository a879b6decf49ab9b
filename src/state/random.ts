/**
 * CSPRNG bytes for IVs, nonces and ids, drawn from a pooled buffer: one `randomFillSync` per
 * 4 KiB instead of one call per token (measured: small `randomBytes` calls were over half of
 * seal + open).
 *
 * A pool lives in the JavaScript heap, and a heap can be copied: every process started from one
 * V8 startup snapshot, or forked from one parent, would hand out the same "random" bytes — the
 * same AES-GCM IV under the same key. So the pool belongs to one process id and is dropped when
 * the id changes, and a snapshot build registers a callback that drops it on deserialization.
 * Node's own `crypto.randomUUID()` keeps a similar cache, so ids come from here too.
 */

type NodeCrypto = Pick<typeof import("node:crypto"), "randomFillSync">;
type NodeV8 = Pick<typeof import("node:v8"), "startupSnapshot">;

interface Proc {
  pid?: number;
  getBuiltinModule?: (id: string) => unknown;
}

const POOL_BYTES = 4096;

/** A pooled source over `fill`, refilled whenever `owner()` changes. Exported for tests. */
export function pooledRandom(
  fill: (buffer: Uint8Array) => void,
  owner: () => unknown,
  copy: (bytes: Uint8Array) => Uint8Array = (b) => b.slice(),
): { bytes(length: number): Uint8Array; drop(): void } {
  const pool = new Uint8Array(POOL_BYTES);
  let offset = POOL_BYTES;
  let filledFor: unknown;
  return {
    bytes(length) {
      if (length > POOL_BYTES) {
        const out = new Uint8Array(length);
        fill(out);
        return out;
      }
      const who = owner();
      if (offset + length > POOL_BYTES || who !== filledFor) {
        fill(pool);
        offset = 0;
        filledFor = who;
      }
      const out = copy(pool.subarray(offset, offset + length));
      // Every byte is handed out once: wipe what was taken.
      pool.fill(0, offset, offset + length);
      offset += length;
      return out;
    },
    drop() {
      offset = POOL_BYTES;
    },
  };
}

const proc = (globalThis as { process?: Proc }).process;
const nodeCrypto = proc?.getBuiltinModule?.("node:crypto") as NodeCrypto | undefined;
const webCrypto = (globalThis as { crypto?: Crypto }).crypto;

// On Node the bytes handed out are Buffers (copies carved from Node's own allocation slab):
// a small plain Uint8Array lives on the JS heap, and passing it to native code (an IV to
// createCipheriv, bytes to Buffer#toString) first moves it off the heap — measured ≈ 1 µs each.
const NodeBuffer = (globalThis as { Buffer?: typeof Buffer }).Buffer;
const source = nodeCrypto
  ? pooledRandom(
      (b) => nodeCrypto.randomFillSync(b),
      () => proc?.pid,
      NodeBuffer ? (b) => NodeBuffer.from(b) : undefined,
    )
  : { bytes: (n: number) => webCrypto!.getRandomValues(new Uint8Array(n)), drop() {} };

// Building a startup snapshot: whatever the pool holds now would be baked into every process
// started from it.
const snapshot = (proc?.getBuiltinModule?.("node:v8") as NodeV8 | undefined)?.startupSnapshot;
if (snapshot?.isBuildingSnapshot()) {
  snapshot.addSerializeCallback(() => source.drop());
  snapshot.addDeserializeCallback(() => source.drop());
}

/** `length` cryptographically random bytes, never handed out twice, never shared across processes. */
export function randomBytes(length: number): Uint8Array {
  return source.bytes(length);
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** A random (version 4) UUID from the same pool. */
export function randomUuid(): string {
  const b = randomBytes(16);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  let s = "";
  for (let i = 0; i < 16; i++) s += (i === 4 || i === 6 || i === 8 || i === 10 ? "-" : "") + HEX[b[i]!];
  return s;
}
