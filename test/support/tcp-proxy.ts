import { createConnection, createServer, type Socket } from "node:net";

/**
 * A TCP proxy in front of a real server, for tests of a store whose server stalls or goes away
 * while the test's own server (shared with other tests) keeps running:
 * - `stall()`: connections stay open but nothing is forwarded (a server that hangs);
 * - `cut()`: every connection is closed and new ones refused (a server that went away);
 * - `restore()`: forwarding and accepting again.
 */
export async function startTcpProxy(targetPort: number, targetHost = "127.0.0.1"): Promise<{ port: number; stall(): void; cut(): void; restore(): void; close(): Promise<void> }> {
  const pairs = new Set<[Socket, Socket]>();
  let mode: "open" | "stalled" | "cut" = "open";
  // Stalled: unpiped and paused, so nothing moves either way until piped again.
  const connect = ([a, b]: [Socket, Socket]) => {
    a.pipe(b);
    b.pipe(a);
  };
  const disconnect = ([a, b]: [Socket, Socket]) => {
    a.unpipe(b).pause();
    b.unpipe(a).pause();
  };
  const server = createServer((client) => {
    if (mode === "cut") return client.destroy();
    const upstream = createConnection({ port: targetPort, host: targetHost });
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    if (mode === "open") connect(pair);
    const drop = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  const proxy = {
    port,
    stall() {
      mode = "stalled";
      for (const pair of pairs) disconnect(pair);
    },
    cut() {
      mode = "cut";
      for (const [a, b] of [...pairs]) {
        a.destroy();
        b.destroy();
      }
      pairs.clear();
    },
    restore() {
      mode = "open";
      for (const pair of pairs) connect(pair);
    },
    async close() {
      proxy.cut();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
