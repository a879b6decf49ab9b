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

/** A compiled template: literals and variables in order, no two variables adjacent. */
type Part = { literal: string } | { name: string; reserved: boolean };

/** Compile `template`; throws a `TypeError` naming what is not supported. */
export function compileUriTemplate(template: string): CompiledUriTemplate {
  if (typeof template !== "string" || !/^[A-Za-z][A-Za-z0-9+.-]*:/.test(template)) throw new TypeError(`uriTemplate must be an absolute URI template, got ${JSON.stringify(template)}`);
  const names: string[] = [];
  const parts: Part[] = [];
  let at = 0;
  let previousWasVariable = false;
  for (const m of template.matchAll(/\{([^{}]*)\}/g)) {
    const literal = template.slice(at, m.index);
    if (/[{}]/.test(literal)) throw new TypeError(`uriTemplate ${JSON.stringify(template)}: unbalanced braces`);
    if (literal === "" && previousWasVariable) throw new TypeError(`uriTemplate ${JSON.stringify(template)}: two variables with nothing between them cannot be told apart`);
    if (literal !== "") parts.push({ literal });
    const expression = m[1]!;
    const reserved = expression.startsWith("+");
    const name = reserved ? expression.slice(1) : expression;
    if (!NAME.test(name)) {
      throw new TypeError(`uriTemplate ${JSON.stringify(template)}: {${expression}} is not supported (use {name} for one segment or {+name} for a path; names are [A-Za-z0-9_])`);
    }
    if (names.includes(name)) throw new TypeError(`uriTemplate ${JSON.stringify(template)}: variable "${name}" appears twice`);
    names.push(name);
    parts.push({ name, reserved });
    at = m.index + m[0].length;
    previousWasVariable = true;
  }
  const tail = template.slice(at);
  if (/[{}]/.test(tail)) throw new TypeError(`uriTemplate ${JSON.stringify(template)}: unbalanced braces`);
  if (tail !== "") parts.push({ literal: tail });
  return {
    names,
    match(uri) {
      const raw = matchParts(parts, uri);
      if (raw === undefined) return undefined;
      const variables: Record<string, string> = {};
      try {
        for (const [name, value] of raw) Object.defineProperty(variables, name, { value: decodeURIComponent(value), enumerable: true, writable: true, configurable: true });
      } catch {
        return undefined; // malformed percent-encoding
      }
      return variables;
    },
  };
}

/** Where a `{name}` value must stop: at a `/`, `?` or `#`. */
const isStop = (code: number) => code === 47 || code === 63 || code === 35;

/**
 * Match `uri` against the parts in time linear in its length (for a given template): a regular
 * expression with a lazy `{+name}` followed by more template backtracks quadratically, and any
 * client can send any uri. First, for each part from the last, which positions the rest of the
 * template can match from (`can[i][p]`); then one pass forward choosing, as the regular
 * expression `^…(.+?)…([^/?#]+)…$` would, the shortest `{+name}` and the longest `{name}` after
 * which the rest still matches. The same answers as that expression, without its cost.
 */
function matchParts(parts: readonly Part[], uri: string): Array<[string, string]> | undefined {
  const n = uri.length;
  // stop[p]: the first index ≥ p holding a character a `{name}` cannot contain (n if none).
  let stop: Int32Array | undefined;
  const stops = () => {
    if (stop) return stop;
    stop = new Int32Array(n + 1);
    stop[n] = n;
    for (let p = n - 1; p >= 0; p--) stop[p] = isStop(uri.charCodeAt(p)) ? p : stop[p + 1]!;
    return stop;
  };
  // can[i]: positions from which parts i.. match to the end; nextTrue/prevTrue answer "the
  // nearest such position after/before p" in O(1).
  const can: Uint8Array[] = new Array(parts.length + 1);
  const nextTrue: Int32Array[] = new Array(parts.length + 1);
  const prevTrue: Int32Array[] = new Array(parts.length + 1);
  const index = (i: number) => {
    const ok = can[i]!;
    const next = new Int32Array(n + 2);
    next[n + 1] = -1;
    for (let p = n; p >= 0; p--) next[p] = ok[p] ? p : next[p + 1]!;
    const prev = new Int32Array(n + 1);
    for (let p = 0; p <= n; p++) prev[p] = ok[p] ? p : p > 0 ? prev[p - 1]! : -1;
    nextTrue[i] = next;
    prevTrue[i] = prev;
  };
  can[parts.length] = new Uint8Array(n + 1);
  can[parts.length]![n] = 1;
  index(parts.length);
  for (let i = parts.length - 1; i >= 0; i--) {
    const part = parts[i]!;
    const ok = new Uint8Array(n + 1);
    const after = can[i + 1]!;
    if ("literal" in part) {
      const len = part.literal.length;
      for (let p = 0; p + len <= n; p++) if (after[p + len] && uri.startsWith(part.literal, p)) ok[p] = 1;
    } else {
      const next = nextTrue[i + 1]!;
      for (let p = 0; p < n; p++) {
        const q = next[p + 1]!; // the nearest end after p from which the rest matches
        if (q === -1) continue;
        ok[p] = part.reserved || q <= stops()[p]! ? 1 : 0;
      }
    }
    can[i] = ok;
    index(i);
  }
  if (!can[0]![0]) return undefined;
  const values: Array<[string, string]> = [];
  let p = 0;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if ("literal" in part) {
      p += part.literal.length;
      continue;
    }
    const q = part.reserved ? nextTrue[i + 1]![p + 1]! : prevTrue[i + 1]![stops()[p]!]!;
    values.push([part.name, uri.slice(p, q)]);
    p = q;
  }
  return values;
}
