/** Client capabilities an ask can need, and an author can branch on with `ctx.can(...)`. */
export type Capability = "elicitation" | "elicitation.url" | "sampling" | "roots";

/** Every capability `ctx.can` knows. */
export const CAPABILITIES: readonly Capability[] = ["elicitation", "elicitation.url", "sampling", "roots"];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * `can(kind)` over one request's declared clientCapabilities. `elicitation: {}` means form
 * mode only; URL mode needs `elicitation.url`. Only the presence of objects is read (no value
 * inside them matters), and anything malformed declares nothing.
 */
export function capabilityCheck(declared: unknown): (kind: Capability) => boolean {
  const caps = isObject(declared) ? declared : {};
  const elicitation = caps.elicitation;
  const declaresModes = isObject(elicitation) && (elicitation.form !== undefined || elicitation.url !== undefined);
  const can: Record<Capability, boolean> = {
    elicitation: isObject(elicitation) && (!declaresModes || isObject(elicitation.form)),
    "elicitation.url": isObject(elicitation) && isObject(elicitation.url),
    sampling: isObject(caps.sampling),
    roots: isObject(caps.roots),
  };
  return (kind) => can[kind] === true;
}

/** Whether declared clientCapabilities name the extension `id` (`extensions[id]` an object). */
export function declaresExtension(declared: unknown, id: string): boolean {
  const extensions = isObject(declared) ? declared.extensions : undefined;
  return isObject(extensions) && Object.hasOwn(extensions, id) && isObject(extensions[id]);
}

/** The capability an embedded request needs. */
export function capabilityOfRequest(request: { method: string; params?: unknown }): Capability {
  switch (request.method) {
    case "elicitation/create":
      return isObject(request.params) && request.params.mode === "url" ? "elicitation.url" : "elicitation";
    case "sampling/createMessage":
      return "sampling";
    default:
      return "roots";
  }
}
