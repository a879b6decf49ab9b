import { z } from "zod";
import type { PromptDefinition } from "../authoring/definitions.js";

// Stateless serving builds a fresh McpServer for every request, and `register` hands it every
// definition again. What the SDK derives from a definition's schemas — the JSON Schema it lists
// and checks `Mcp-Param-*` headers against, a prompt's argument schema — depends on the
// definition alone, so it is built once per definition here, not once per request.

type Io = "input" | "output";
/** The Standard JSON Schema converter's options (the SDK asks for one target). */
interface JsonSchemaOptions {
  readonly target: string;
}
type Converter = Record<Io, (options: JsonSchemaOptions) => Record<string, unknown>>;
/** A Standard Schema that also converts itself to JSON Schema (StandardJSONSchemaV1). */
interface Listed {
  readonly "~standard": Pick<z.ZodType["~standard"], "version" | "vendor" | "validate"> & { readonly jsonSchema: Converter };
}

const listed = new WeakMap<z.ZodType, Listed>();
const promptArgs = new WeakMap<PromptDefinition, z.ZodObject>();

/**
 * `schema` as the SDK takes it (a Standard Schema), its JSON Schema converted once per target
 * and direction. Validation is the schema's own (the runtime validates; the SDK never calls it
 * for our definitions, whose calls it routes to us).
 */
export function listedSchema(schema: z.ZodType): Listed {
  const known = listed.get(schema);
  if (known !== undefined) return known;
  // Kept as text: a JSON Schema is JSON, and parsing it is a fresh copy on each use (3x cheaper
  // than structuredClone), so what the SDK adds to a listing never reaches the cached one.
  const converted = new Map<string, string>();
  const convert = (io: Io) => (options: JsonSchemaOptions) => {
    const key = `${io} ${options.target}`;
    let json = converted.get(key);
    if (json === undefined) {
      json = JSON.stringify(toJsonSchema(schema, io, options));
      converted.set(key, json);
    }
    return JSON.parse(json) as Record<string, unknown>;
  };
  const standard = schema["~standard"];
  const wrapped: Listed = {
    "~standard": {
      version: 1,
      vendor: standard.vendor,
      validate: (value) => standard.validate(value),
      jsonSchema: { input: convert("input"), output: convert("output") },
    },
  };
  listed.set(schema, wrapped);
  return wrapped;
}

/** Through zod's own Standard JSON Schema when it has one (zod ≥ 4.2), `z.toJSONSchema` before. */
function toJsonSchema(schema: z.ZodType, io: Io, options: JsonSchemaOptions): Record<string, unknown> {
  const standard = schema["~standard"] as { jsonSchema?: Converter };
  if (standard.jsonSchema !== undefined) return standard.jsonSchema[io](options);
  const target = options.target === "draft-07" || options.target === "draft-2020-12" ? options.target : undefined;
  return z.toJSONSchema(schema, { io, ...(target !== undefined ? { target } : {}) }) as Record<string, unknown>;
}

/** The prompt's arguments as the SDK lists them: name, whether required, and the description. */
export function promptArgsSchema(def: PromptDefinition): z.ZodObject {
  let schema = promptArgs.get(def);
  if (schema === undefined) {
    schema = z.object(
      Object.fromEntries(
        def.arguments.map((a) => {
          const field = a.description === undefined ? z.string() : z.string().describe(a.description);
          return [a.name, a.required ? field : field.optional()];
        }),
      ),
    );
    promptArgs.set(def, schema);
  }
  return schema;
}
