import { callWithInput, ClientError, createFetchSender, type InputHandlers, type Send } from "mcp-yield/client";
import type { Instance } from "./cluster.js";

/**
 * Calls spread over instances behind a (client-side) round-robin balancer: every round of a
 * call goes to a different instance than the round before. A request whose connection fails
 * (an instance killed or restarting) is retried on the next instance — that is safe because
 * the server keeps nothing: the same round replays from the state anywhere.
 */

export interface LoadReport {
  calls: number;
  completed: number;
  errors: Array<{ call: number; tool: string; error: string }>;
  wrong: Array<{ call: number; tool: string; detail: string }>;
  requests: number;
  /** Requests re-sent after a connection failure. */
  retries: number;
  /** Requests that went to a different instance than the previous request of the same call. */
  crossInstanceRounds: number;
  /** Requests that went to the same instance as the previous one (only after all others failed). */
  sameInstanceRounds: number;
  /** Calls started and not yet finished. */
  inFlight: number;
}

const DESTINATIONS = ["Lisbon", "Kyoto", "Reykjavik", "Nairobi"] as const;

function balancedSend(instances: Instance[], start: number, report: LoadReport): Send {
  let last = -1;
  const senders = new Map<string, Send>();
  const senderFor = (url: string) => {
    let s = senders.get(url);
    if (!s) senders.set(url, (s = createFetchSender(url, { capabilities: { elicitation: {} }, timeoutMs: 30_000 })));
    return s;
  };
  return async (method, params) => {
    // Never the instance that served the previous round: cycle through the others (waiting
    // for one to come back if all of them are down).
    const others = last === -1 ? instances.map((_, i) => i) : instances.map((_, i) => i).filter((i) => i !== last);
    const first = start % others.length;
    for (let attempt = 0; ; attempt++) {
      const index = others[(first + attempt) % others.length]!;
      try {
        report.requests++;
        const result = await senderFor(instances[index]!.url)(method, params);
        if (last !== -1) {
          if (index !== last) report.crossInstanceRounds++;
          else report.sameInstanceRounds++;
        }
        last = index;
        return result;
      } catch (error) {
        const transport = error instanceof ClientError && error.reason === "transport";
        if (!transport || attempt >= 30) throw error;
        report.retries++;
        await new Promise((r) => setTimeout(r, 50 + 50 * attempt));
      }
    }
  };
}

export async function runLoad(
  instances: Instance[],
  options: {
    calls: number;
    thinkMs: [number, number];
    onStart?: (report: LoadReport) => void;
    /** Every third call waits for this before its last answer, so it spans whatever happens meanwhile. */
    hold?: Promise<unknown>;
  },
): Promise<LoadReport> {
  const report: LoadReport = { calls: options.calls, completed: 0, errors: [], wrong: [], requests: 0, retries: 0, crossInstanceRounds: 0, sameInstanceRounds: 0, inFlight: 0 };
  options.onStart?.(report);
  const think = () => new Promise((r) => setTimeout(r, options.thinkMs[0] + Math.random() * (options.thinkMs[1] - options.thinkMs[0])));

  await Promise.all(
    Array.from({ length: options.calls }, async (_, call) => {
      const send = balancedSend(instances, call, report);
      report.inFlight++;
      const planTrip = call % 2 === 1;
      const tool = planTrip ? "plan_trip" : "book_flight";
      const name = `traveller-${call}`;
      const destination = DESTINATIONS[call % DESTINATIONS.length]!;
      const asked: string[] = [];
      const handlers: InputHandlers = {
        elicit: async (params, { key }) => {
          asked.push(params.message);
          await think();
          if (key === "confirm" && call % 3 === 0) await options.hold;
          const content: Record<string, string | boolean> = key === "name" ? { name } : key === "destination" ? { destination } : { confirm: true };
          return { action: "accept", content };
        },
      };
      try {
        const args = planTrip ? {} : { destination };
        const result = await callWithInput<{ content: Array<{ text?: string }>; isError?: boolean }>(send, "tools/call", { name: tool, arguments: args }, handlers);
        const text = result.content.map((c) => c.text).join(" ");
        let problem: string | undefined;
        if (planTrip) {
          if (text !== `Trip planned: ${name} is going to ${destination}.`) problem = `final text ${JSON.stringify(text)}`;
          else if (asked[1] !== `Where would you like to go, ${name}?`) problem = `second question ${JSON.stringify(asked[1])}`;
        } else {
          const draft = /draft (D-[0-9a-f]{8})/.exec(asked[0] ?? "")?.[1];
          if (!draft || !text.startsWith(`Booked ${destination}`) || !text.includes(draft)) problem = `final text ${JSON.stringify(text)} for question ${JSON.stringify(asked[0])}`;
        }
        if (problem) report.wrong.push({ call, tool, detail: problem });
        else report.completed++;
      } catch (error) {
        report.errors.push({ call, tool, error: error instanceof Error ? error.message : String(error) });
      } finally {
        report.inFlight--;
      }
    }),
  );
  return report;
}
