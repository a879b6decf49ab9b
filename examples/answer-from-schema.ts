import type { RequestedSchema } from "mcp-yield";

/** A plausible value for every field of a form: what a scripted (non-human) client answers. */
type Value = string | number | boolean | string[];

export function contentFor(schema: RequestedSchema, overrides: Record<string, Value> = {}): Record<string, Value> {
  const content: Record<string, Value> = {};
  for (const [name, field] of Object.entries(schema.properties)) {
    if (Object.hasOwn(overrides, name)) content[name] = overrides[name]!;
    else if (field.default !== undefined) content[name] = field.default;
    else if (field.type === "boolean") content[name] = true;
    else if (field.type === "number" || field.type === "integer") content[name] = "minimum" in field && typeof field.minimum === "number" ? field.minimum : 1;
    else if (field.type === "array") content[name] = "enum" in field.items ? field.items.enum.slice(0, 1) : field.items.anyOf.slice(0, 1).map((o) => o.const);
    else if ("enum" in field && Array.isArray(field.enum)) content[name] = field.enum[0];
    else if ("oneOf" in field && Array.isArray(field.oneOf) && field.oneOf[0]) content[name] = field.oneOf[0].const;
    else if ("format" in field && field.format === "email") content[name] = "user@example.com";
    else content[name] = name;
  }
  return content;
}
