import { callWithInput, type Send } from "mcp-yield/client";

const answers: Record<string, Record<string, string | boolean>> = { name: { name: "Ada" }, destination: { destination: "Kyoto" }, confirm: { confirm: true } };

/**
 * `calls` plan_trip calls in flight at once through `send`, their rounds interleaved: answered to
 * the end, or stopped at their third ask (`onSuspended` set), where each stays suspended and
 * `onSuspended` gets the state the server sent with that ask. A wave of whole calls first shows an
 * instance how long its rounds take to come back, so a later wave's generators are held while
 * they wait (bench/heap.ts, test/system/memory.test.ts).
 */
export async function planTripWave(send: Send, calls: number, onSuspended?: (requestState: string) => void): Promise<void> {
  const tracked: Send = Object.assign(async (method: string, params: Record<string, unknown>) => {
    const result = (await send(method, params)) as { requestState?: string; inputRequests?: Record<string, unknown> };
    if (onSuspended !== undefined && result.inputRequests?.confirm !== undefined && result.requestState !== undefined) onSuspended(result.requestState);
    return result;
  }, send);
  const ended = await Promise.allSettled(
    Array.from({ length: calls }, () =>
      callWithInput(
        tracked,
        "tools/call",
        { name: "plan_trip", arguments: {} },
        {
          elicit: (_p, { key }) => {
            if (key === "confirm" && onSuspended !== undefined) throw new Error("stop");
            return { action: "accept", content: answers[key]! };
          },
        },
      ),
    ),
  );
  // Only the stop at the third ask may end a call early.
  const failed = ended.find((e) => e.status === "rejected" && !(onSuspended !== undefined && /stop/.test(String(e.reason))));
  if (failed !== undefined) throw (failed as PromiseRejectedResult).reason;
}
