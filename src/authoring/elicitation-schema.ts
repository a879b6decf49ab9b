import { z } from "zod";
import { deepFreeze } from "../state/index.js";
import type { PrimitiveSchemaDefinition, RequestedSchema } from "../wire/index.js";

/** A zod object schema accepted by `elicit`: its fields must fit the elicitation form subset. */
export type FormSchema = z.ZodObject;

/** Thrown when a zod schema cannot be expressed as an elicitation form. */
export class ElicitationSchemaError extends TypeError {
  override readonly name = "ElicitationSchemaError";
}

type Json = Record<string, unknown>;
const STRING_FORMATS = new Set(["email", "uri", "date", "date-time"]);
const ANNOTATIONS = ["title", "description"] as const;
const cache = new WeakMap<FormSchema, RequestedSchema>();

function pick(source: Json, keys: readonly string[], into: Json): Json {
  for (const k of keys) if (source[k] !== undefined) into[k] = source[k];
  return into;
}

/** Numeric bounds zod adds on its own (safe-integer limits) say nothing to a user; drop them. */
function meaningfulBound(value: unknown): boolean {
  return typeof value === "number" && Math.abs(value) !== Number.MAX_SAFE_INTEGER;
}

function isStringArray(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((x) => typeof x === "string");
}

function convertField(name: string, field: Json): PrimitiveSchemaDefinition {
  const fail = (why: string): never => {
    throw new ElicitationSchemaError(
      `elicitation field "${name}": ${why}. Forms allow strings (formats email, uri, date, date-time), numbers, integers, booleans, enums of strings and arrays of string enums.`,
    );
  };
  const out: Json = pick(field, ANNOTATIONS, {});
  switch (field.type) {
    case "string": {
      if (field.enum !== undefined) {
        if (!isStringArray(field.enum)) fail("enum values must be strings");
        out.enum = field.enum;
      }
      if (field.format !== undefined) {
        if (!STRING_FORMATS.has(String(field.format))) fail(`string format "${String(field.format)}" is not supported`);
        out.format = field.format;
      }
      pick(field, ["minLength", "maxLength"], out);
      if (typeof field.default === "string") out.default = field.default;
      return { type: "string", ...out } as PrimitiveSchemaDefinition;
    }
    case "number":
    case "integer": {
      if (meaningfulBound(field.minimum)) out.minimum = field.minimum;
      if (meaningfulBound(field.maximum)) out.maximum = field.maximum;
      if (typeof field.default === "number") out.default = field.default;
      return { type: field.type, ...out } as PrimitiveSchemaDefinition;
    }
    case "boolean":
      if (typeof field.default === "boolean") out.default = field.default;
      return { type: "boolean", ...out } as PrimitiveSchemaDefinition;
    case "array": {
      const items = field.items as Json | undefined;
      if (items?.type !== "string" || !isStringArray(items.enum)) fail("arrays must be arrays of a string enum");
      pick(field, ["minItems", "maxItems"], out);
      if (isStringArray(field.default)) out.default = field.default;
      return { type: "array", ...out, items: { type: "string", enum: items!.enum as string[] } } as PrimitiveSchemaDefinition;
    }
    default:
      return fail(
        field.type === "object" ? "nested objects are not allowed" : field.type === undefined ? "unions, nullables and untyped fields are not allowed" : `type "${String(field.type)}" is not allowed`,
      );
  }
}

/**
 * The `requestedSchema` for a zod object, restricted to what elicitation forms allow. Throws
 * `ElicitationSchemaError` naming the offending field. Cached per schema object. Call it at
 * module load (or use `form()`) to refuse a bad schema before any request runs.
 */
export function toRequestedSchema(schema: FormSchema): RequestedSchema {
  const cached = cache.get(schema);
  if (cached) return cached;
  if (!(schema instanceof z.ZodObject)) throw new ElicitationSchemaError("elicit needs a z.object({...}) schema");
  let json: Json;
  try {
    json = z.toJSONSchema(schema, { io: "input", unrepresentable: "throw" }) as Json;
  } catch (cause) {
    throw new ElicitationSchemaError(`elicitation schema cannot be expressed as JSON Schema: ${(cause as Error).message}`);
  }
  const properties: Record<string, PrimitiveSchemaDefinition> = {};
  for (const [name, field] of Object.entries((json.properties ?? {}) as Record<string, Json>)) {
    properties[name] = convertField(name, field);
  }
  const result: RequestedSchema = { type: "object", properties };
  if (isStringArray(json.required) && json.required.length > 0) result.required = json.required;
  // Frozen: shared by every elicit of this schema, and hashed once for fingerprints.
  deepFreeze(result);
  cache.set(schema, result);
  return result;
}
