import { z } from "zod";
import { createStateCodec, elicit, type StateCodec, type StateKey, step, tool, toRequestedSchema } from "mcp-yield";
import { elicitResult } from "mcp-yield/wire";

/**
 * The realistic subject (issue 59): a tool shaped as users write them, not as the count tool is.
 * It reads a 2 KB record once (a step: an API call whose result the journal keeps), then asks the
 * user about each of R lines of it — each ask under an explicit key, its message built from the
 * call's own data, its answer checked by a schema with refinements — and answers with a summary.
 * Two ways: (a) the generator, and (b) a hand-written state machine on our codec doing the same
 * validation and keeping what it must (the record and the answers) in its sealed state.
 */

/** An answer about one line: refined beyond the form's JSON Schema (what zod checks on every answer). */
export const LineAnswer = z
  .object({
    approve: z.boolean(),
    quantity: z.number().int().min(1).max(99),
    note: z
      .string()
      .max(200)
      .refine((s) => !/[<>]/.test(s), "no markup in notes"),
  })
  .refine((a) => a.approve || a.note.length > 0, "a rejected line needs a note");
const requestedSchema = toRequestedSchema(LineAnswer);

export const Input = z.object({
  customer: z.string().min(1).max(64),
  order: z.string().regex(/^ord-[0-9]+$/),
  lines: z.number().int().min(1).max(1000),
});
export type RealisticArgs = z.output<typeof Input>;

export interface OrderRecord {
  order: string;
  customer: string;
  lines: Array<{ sku: string; title: string; price: number }>;
  /** Padding to the 2 KB a real record of an API weighs (addresses, terms, audit fields). */
  terms: string;
}

/** The "API call": a deterministic 2 KB record for the order (what the step returns and the journal keeps). */
export function fetchOrder({ customer, order, lines }: RealisticArgs): OrderRecord {
  const items = Array.from({ length: Math.min(lines, 8) }, (_, i) => ({ sku: `SKU-${order.slice(4)}-${i}`, title: `Item ${i} for ${customer}`, price: 10 + i }));
  const record: OrderRecord = { order, customer, lines: items, terms: "" };
  record.terms = "t".repeat(Math.max(0, 2048 - JSON.stringify(record).length));
  return record;
}

const lineOf = (record: OrderRecord, i: number) => record.lines[i % record.lines.length]!;
/** The ask for line `i`: its key and its message, built from the call's own record. */
export const askKey = (i: number) => `line-${i}`;
export const askMessage = (record: OrderRecord, i: number, total: number) => {
  const line = lineOf(record, i);
  return `Order ${record.order} for ${record.customer}, line ${i + 1} of ${total}: ${line.title} (${line.sku}) at ${line.price}. Approve, and how many?`;
};
const summary = (record: OrderRecord, approved: number, units: number) => `${record.order}: ${approved} lines approved, ${units} units`;

/** (a) The generator. */
export const realisticGenerator = tool({
  name: "review-order",
  description: "reads an order and asks about each of its lines",
  input: Input,
  *run(args) {
    const record = yield* step("fetch-order", async () => fetchOrder(args));
    let approved = 0;
    let units = 0;
    for (let i = 0; i < args.lines; i++) {
      const a = yield* elicit(askMessage(record, i, args.lines), LineAnswer, { key: askKey(i) });
      if (a.action === "accept" && a.content.approve) {
        approved++;
        units += a.content.quantity;
      }
    }
    return summary(record, approved, units);
  },
});

type Answer = z.output<typeof LineAnswer> | null;
type Kept = { record: OrderRecord; answers: Answer[] };
export type RealisticParams = { name: string; arguments: RealisticArgs; inputResponses?: Record<string, unknown>; requestState?: string };

/**
 * (b) The same tool by hand: the arguments checked, the record fetched on the first request and
 * kept in the sealed state, each answer checked (the elicitation result, then the refined
 * schema), every answer kept; the same asks, keys and messages.
 */
export function handWrittenRealistic(keys: StateKey[]) {
  const codec: StateCodec<Kept> = createStateCodec<Kept>({ keys });
  return (params: RealisticParams) => {
    const args = Input.parse(params.arguments);
    const binding = { method: "tools/call" as const, target: "review-order", arguments: params.arguments };
    const st: Kept = params.requestState === undefined ? { record: fetchOrder(args), answers: [] } : codec.open(params.requestState, binding).data;
    const key = askKey(st.answers.length);
    const raw = params.inputResponses && Object.hasOwn(params.inputResponses, key) ? params.inputResponses[key] : undefined;
    const answer = elicitResult.safeParse(raw);
    if (answer.success) {
      const content = answer.data.action === "accept" ? LineAnswer.safeParse(answer.data.content) : undefined;
      if (answer.data.action !== "accept") st.answers.push(null);
      else if (content?.success) st.answers.push(content.data);
    }
    if (st.answers.length >= args.lines) {
      const yes = st.answers.filter((a): a is NonNullable<Answer> => a?.approve === true);
      return {
        resultType: "complete",
        content: [
          {
            type: "text",
            text: summary(
              st.record,
              yes.length,
              yes.reduce((s, a) => s + a.quantity, 0),
            ),
          },
        ],
      };
    }
    const i = st.answers.length;
    return {
      resultType: "input_required",
      inputRequests: { [askKey(i)]: { method: "elicitation/create", params: { mode: "form", message: askMessage(st.record, i, args.lines), requestedSchema } } },
      requestState: codec.seal({ binding, data: st }),
    };
  };
}

type Result = { resultType: string; inputRequests?: Record<string, unknown>; requestState?: string; content?: Array<{ text?: string }> };
const ANSWER = { action: "accept", content: { approve: true, quantity: 2, note: "as ordered" } };

/**
 * `inFlight` distinct calls at once, one request an operation: each operation sends the next
 * request of the next call in turn (round-robin), and a call that completes is replaced by a new
 * one (a new customer and order, so nothing is shared between calls but the code). Returns the
 * operation; each whole call takes `lines + 1` requests, checked on a first call.
 */
export async function interleaved(call: (params: RealisticParams) => unknown, lines: number, inFlight: number): Promise<() => Promise<void>> {
  let started = 0;
  const fresh = (): RealisticParams => {
    const n = started++;
    return { name: "review-order", arguments: { customer: `customer ${n % 9973}`, order: `ord-${n}`, lines } };
  };
  const next = (params: RealisticParams, result: Result): RealisticParams | undefined => {
    if (result.resultType !== "input_required") {
      if (result.content?.[0]?.text !== `${params.arguments.order}: ${lines} lines approved, ${2 * lines} units`) throw new Error(`wrong result: ${JSON.stringify(result)}`);
      return undefined;
    }
    const inputResponses = Object.fromEntries(Object.keys(result.inputRequests ?? {}).map((k) => [k, ANSWER]));
    return { name: params.name, arguments: params.arguments, inputResponses, ...(result.requestState !== undefined ? { requestState: result.requestState } : {}) };
  };
  // Sanity: a whole call takes lines + 1 requests and gives the right summary.
  let params: RealisticParams | undefined = fresh();
  let requests = 0;
  for (; params !== undefined; requests++) params = next(params, (await call(params)) as Result);
  if (requests !== lines + 1) throw new Error(`realistic call took ${requests} requests, not ${lines + 1}`);
  // Staggered: call j starts j requests along (modulo a whole call), so any stretch of requests
  // holds every round alike — in step, all 300 would sit at the same round, and a batch of the
  // bench would measure that round's replay alone (windows read 46 to 223 µs per request).
  const slots = Array.from({ length: inFlight }, fresh);
  for (let j = 0; j < inFlight; j++) for (let k = 0; k < j % (lines + 1); k++) slots[j] = next(slots[j]!, (await call(slots[j]!)) as Result) ?? fresh();
  let turn = 0;
  return async () => {
    const at = turn++ % inFlight;
    const sent = slots[at]!;
    slots[at] = next(sent, (await call(sent)) as Result) ?? fresh();
  };
}
