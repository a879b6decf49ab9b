import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileUriTemplate } from "../../src/internal.js";

// Template matching gives the answers of the regular expression it replaced — shortest
// `{+name}`, longest `{name}` such that the rest matches — in time linear in the uri.

const escapeRegExp = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** The reference: the regular expression the matcher used to be. */
function reference(template: string, uri: string): Record<string, string> | undefined {
  const names: string[] = [];
  const pattern = template.replace(/\{(\+?)(\w+)\}|([^{}]+)/g, (_m, plus: string, name: string, literal: string) => {
    if (literal !== undefined) return escapeRegExp(literal);
    names.push(name);
    return plus ? "(.+?)" : "([^/?#]+)";
  });
  const m = new RegExp(`^${pattern}$`).exec(uri);
  if (m === null) return undefined;
  try {
    return Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(m[i + 1]!)]));
  } catch {
    return undefined;
  }
}

const literal = fc.stringMatching(/^[a./?#-]{1,3}$/);
const variable = fc.tuple(fc.boolean(), fc.nat(1000)).map(([plus, n]) => ({ plus, n }));
const template = fc
  .array(fc.tuple(literal, variable), { minLength: 1, maxLength: 3 })
  .chain((pairs) => fc.option(literal, { nil: undefined }).map((tail) => `x://${pairs.map(([lit, v], i) => `${lit}{${v.plus ? "+" : ""}v${i}}`).join("")}${tail ?? ""}`));

describe("uri template matching", () => {
  it("agrees with the regular expression on every template and uri (property)", () => {
    fc.assert(
      fc.property(template, fc.stringMatching(/^[a./?#%-]{0,14}$/), (t, tail) => {
        const compiled = compileUriTemplate(t);
        for (const uri of [`x://${tail}`, `x://a${tail}a`, `x://${tail}.a/b`]) expect(compiled.match(uri)).toEqual(reference(t, uri));
      }),
      { numRuns: 2000 },
    );
  });

  it("a 1 MiB uri against {+path} followed by more template is answered in linear time, match or not", () => {
    const files = compileUriTemplate("files://{+path}.{ext}");
    const deep = compileUriTemplate("files://{a}.{b}.{c}/{+rest}#{frag}");
    const matchAll = (long: string) => {
      expect(files.match(`files://${long}/x`)).toBeUndefined(); // what took the regular expression hours
      // The shortest path after which the rest matches, as the regular expression chose.
      expect(files.match(`files://${long}txt`)).toEqual({ path: "a", ext: `${long.slice(2)}txt` });
      expect(deep.match(`files://${long}`)).toBeUndefined();
    };
    // CPU time (this process's), best of three: what a loaded machine adds is waiting, not CPU.
    const cpuMs = (long: string) =>
      Math.min(
        ...[0, 1, 2].map(() => {
          const before = process.cpuUsage();
          matchAll(long);
          const used = process.cpuUsage(before);
          return (used.user + used.system) / 1000;
        }),
      );
    const small = cpuMs("a.".repeat(32 * 1024)); // 64 KiB
    const large = cpuMs("a.".repeat(512 * 1024)); // 1 MiB: 16 times as long
    // Linear: about 16 times the CPU (64 allows for noise and GC); the quadratic matcher took
    // ~3 s for 48 KB and would take 256 times as long here (about 20 minutes).
    expect(large / Math.max(small, 1), `64 KiB: ${small.toFixed(1)} ms, 1 MiB: ${large.toFixed(1)} ms`).toBeLessThan(64);
    expect(large).toBeLessThan(30_000);
  });
});
