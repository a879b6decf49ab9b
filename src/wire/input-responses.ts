import { z } from "zod";
import { role, samplingContent } from "./input-requests.js";

/** The raw results a client sends back in `inputResponses`, one per `inputRequests` key. */

const meta = z.record(z.string(), z.unknown());

/** A value a form field may hold. */
export const elicitValue = z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]);

/** `ElicitResult`: `accept` carries the form content; `decline` / `cancel` carry none. */
export const elicitResult = z.looseObject({
  action: z.enum(["accept", "decline", "cancel"]),
  content: z.record(z.string(), elicitValue).optional(),
  _meta: meta.optional(),
});
/** An elicitation's answer. */
export type ElicitResult = z.infer<typeof elicitResult>;

/** `CreateMessageResult`. */
export const createMessageResult = z.looseObject({
  role,
  content: z.union([samplingContent, z.array(samplingContent)]),
  model: z.string(),
  stopReason: z.string().optional(),
  _meta: meta.optional(),
});
/** A sampling answer. */
export type CreateMessageResult = z.infer<typeof createMessageResult>;

/** One root the client exposes. */
export const root = z.looseObject({
  uri: z.string().startsWith("file://"),
  name: z.string().optional(),
  _meta: meta.optional(),
});
/** One root the client exposes. */
export type Root = z.infer<typeof root>;

/** `ListRootsResult`. */
export const listRootsResult = z.looseObject({ roots: z.array(root), _meta: meta.optional() });
/** A roots answer. */
export type ListRootsResult = z.infer<typeof listRootsResult>;

/**
 * `inputResponses` as it arrives: an object of unknown entries. Each entry is validated
 * against the result schema of the request asked under its key, never trusted blindly.
 */
export const inputResponses = z.record(z.string(), z.unknown());
/** `inputResponses` as it arrives. */
export type InputResponses = z.infer<typeof inputResponses>;
