/**
 * URI templates for resource templates: RFC 6570 simple expansion `{name}` (one path segment,
 * percent-decoded) and reserved expansion `{+name}` (may span `/`). Other operators, lists and
 * modifiers are refused when the template is defined, so a template never silently matches
 * something other than what it says.
 */

/** The variable names of a template, at the type level: `"notes://{folder}/{+path}"` → `"folder" | "path"`. */
export type TemplateVariableNames<T extends string> = T extends `${string}{${infer Expression}}${infer Rest}`
  ? (Expression extends `+${infer Name}` ? Name : Expression) | TemplateVariableNames<Rest>
  : never;

/** A template's variables, each a string. */
export type TemplateVariables<T extends string> = { [K in TemplateVariableNames<T>]: string };

/** A compiled template: its variable names and a matcher. */
export interface CompiledUriTemplate {
  readonly names: readonly string[];
  /** The variables of `uri`, decoded, or `undefined` when it does not match (or is badly encoded). */
  match(uri: string): Record<string, string> | undefined;
}

const NAME = /^[A-Za-z0-9_]+$/;
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Compile `template`; throws a `TypeError` naming what is not supported. */
export function compileUriTemplate(template: string): CompiledUriTemplate {
  if (typeof template !== "string" || !/^[A-Za-z][A-Za-z0-9+.-]*:/.test(template)) throw new TypeError(`uriTemplate must be an absolute URI template, got ${JSON.stringify(template)}`);
  const names: string[] = [];
  let pattern = "^";
  let at = 0;
  let previousWasVariable = false;
  for (const m of template.matchAll(/\{([^{}]*)\}/g)) {
    const literal = template.slice(at, m.index);
    if (/[{}]/.test(literal)) throw new TypeError(`uriTemplate ${JSON.stringify(template)}: unbalanced braces`);
    if (literal === "" && previousWasVariable) throw new TypeError(`uriTemplate ${JSON.stringify(template)}: two variables with nothing between them cannot be told apart`);
    pattern += escapeRegExp(literal);
    const expression = m[1]!;
    const reserved = expression.startsWith("+");
    const name = reserved ? expression.slice(1) : expression;
    if (!NAME.test(name)) {
      throw new TypeError(`uriTemplate ${JSON.stringify(template)}: {${expression}} is not supported (use {name} for one segment or {+name} for a path; names are [A-Za-z0-9_])`);
    }
    if (names.includes(name)) throw new TypeError(`uriTemplate ${JSON.stringify(template)}: variable "${name}" appears twice`);
    names.push(name);
    pattern += reserved ? "(.+?)" : "([^/?#]+)";
    at = m.index + m[0].length;
    previousWasVariable = true;
  }
  const tail = template.slice(at);
  if (/[{}]/.test(tail)) throw new TypeError(`uriTemplate ${JSON.stringify(template)}: unbalanced braces`);
  pattern += `${escapeRegExp(tail)}$`;
  const regex = new RegExp(pattern);
  return {
    names,
    match(uri) {
      const m = regex.exec(uri);
      if (m === null) return undefined;
      const variables: Record<string, string> = {};
      try {
        names.forEach((name, i) => {
          Object.defineProperty(variables, name, { value: decodeURIComponent(m[i + 1]!), enumerable: true, writable: true, configurable: true });
        });
      } catch {
        return undefined; // malformed percent-encoding
      }
      return variables;
    },
  };
}
