import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { createRuntime, elicit, ProtocolError, resource, resourceTemplate, step, type TemplateVariableNames } from "mcp-yield";
import { compileUriTemplate } from "../../src/internal.js";
import { register } from "mcp-yield/server";
import { accept, simulate } from "mcp-yield/testing";
import { testKey } from "../support/keys.js";
import { rpcRequest } from "../support/rpc-request.js";

const Ok = z.object({ ok: z.boolean() });
const note = resourceTemplate({
  uriTemplate: "notes://{folder}/{+path}",
  name: "note",
  mimeType: "text/markdown",
  *run({ folder, path }, uri) {
    expectTypeOf(folder).toEqualTypeOf<string>();
    const text = yield* step("read", () => `# ${path} in ${folder}`);
    const shown = yield* elicit(`Show private note ${path}?`, Ok, { key: "show" });
    return shown.action === "accept" && shown.content.ok ? `${text} (${uri})` : "(hidden)";
  },
});
const invoice = resourceTemplate({
  uriTemplate: "invoices://{id}",
  name: "invoice",
  variables: z.object({ id: z.coerce.number().int().positive() }),
  *run({ id }) {
    expectTypeOf(id).toEqualTypeOf<number>();
    return `invoice ${id + 1}`;
  },
});
const keys = [testKey("r", 9)];

describe("URI templates", () => {
  it("match {name} (one segment) and {+name} (a path), percent-decoded; types name the variables", () => {
    const t = compileUriTemplate("notes://{folder}/{+path}");
    expect(t.match("notes://work/a/b%20c.md")).toEqual({ folder: "work", path: "a/b c.md" });
    expect(t.match("notes://work")).toBeUndefined();
    expect(t.match("files://work/a")).toBeUndefined();
    expect(t.match("notes://w%ZZ/a")).toBeUndefined(); // malformed encoding: no match, no throw
    expect(compileUriTemplate("x://{__proto__}").match("x://v")).toEqual(Object.defineProperty({}, "__proto__", { value: "v", enumerable: true, writable: true, configurable: true }));
    expectTypeOf<TemplateVariableNames<"notes://{folder}/{+path}">>().toEqualTypeOf<"folder" | "path">();
  });

  it("refuses what it would not match exactly", () => {
    expect(() => compileUriTemplate("notes://{?q}")).toThrow(/\{\?q\} is not supported/);
    expect(() => compileUriTemplate("notes://{a,b}")).toThrow(/is not supported/);
    expect(() => compileUriTemplate("notes://{a}{b}")).toThrow(/nothing between them/);
    expect(() => compileUriTemplate("notes://{a}/{a}")).toThrow(/appears twice/);
    expect(() => compileUriTemplate("notes://{a")).toThrow(/unbalanced/);
    expect(() => compileUriTemplate("relative/{a}")).toThrow(/absolute URI template/);
  });
});

describe("resource templates as generators", () => {
  it("run with typed variables and the concrete uri, asking mid-read, on every path", async () => {
    for (const paths of ["replay", "resume", "both"] as const) {
      const sim = await simulate(note, { uri: "notes://work/plans/q3.md" }, { show: accept({ ok: true }) }, { paths });
      expect(sim.result.contents).toEqual([{ uri: "notes://work/plans/q3.md", mimeType: "text/markdown", text: "# plans/q3.md in work (notes://work/plans/q3.md)" }]);
    }
    expect((await simulate(invoice, { uri: "invoices://41" })).result.contents[0]).toMatchObject({ text: "invoice 42" });
  });

  it("a state is bound to the concrete uri; other uris are refused with -32602", async () => {
    const runtime = createRuntime({ state: { keys } });
    const caps = { clientCapabilities: { elicitation: {} } };
    const first = (await runtime.readResource(note, { uri: "notes://work/a.md" }, caps)) as { requestState: string };
    const moved = runtime.readResource(note, { uri: "notes://work/b.md", requestState: first.requestState, inputResponses: { show: { action: "accept", content: { ok: true } } } }, caps);
    await expect(moved).rejects.toMatchObject({ code: -32602, data: { reason: "wrong_binding" } });
    await expect(runtime.readResource(note, { uri: "files://x" }, caps)).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('does not match the template "notes://{folder}/{+path}"'),
    });
    const bad = await runtime.readResource(invoice, { uri: "invoices://abc" }, caps).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ProtocolError);
    expect((bad as ProtocolError).data?.reason).toBe("invalid_arguments");
    expect((bad as ProtocolError).message).toContain("id:");
  });

  it("through the SDK: listed under resources/templates/list, read over several rounds, plain resources unaffected", async () => {
    const runtime = createRuntime({ state: { keys } });
    const plain = resource({
      uri: "status://now",
      name: "status",
      *run() {
        return "ok";
      },
    });
    const app = createMcpHandler(() => {
      const server = new McpServer({ name: "templates", version: "1" });
      register(server, [note, invoice, plain], { runtime });
      return server;
    });
    let id = 0;
    const rpc = async (method: string, params: Record<string, unknown>) => {
      const response = await app.fetch(rpcRequest(++id, method, params));
      return (await response.json()) as { result?: Record<string, unknown>; error?: { code: number; message: string } };
    };
    const listed = (await rpc("resources/templates/list", {})).result!.resourceTemplates as Array<{ name: string; uriTemplate: string; mimeType?: string }>;
    expect(listed.map((t) => [t.name, t.uriTemplate])).toEqual([
      ["note", "notes://{folder}/{+path}"],
      ["invoice", "invoices://{id}"],
    ]);
    const r1 = (await rpc("resources/read", { uri: "notes://home/todo.md" })).result!;
    expect(r1.resultType).toBe("input_required");
    const r2 = (await rpc("resources/read", { uri: "notes://home/todo.md", requestState: r1.requestState, inputResponses: { show: { action: "accept", content: { ok: true } } } })).result!;
    expect(r2.contents).toEqual([{ uri: "notes://home/todo.md", mimeType: "text/markdown", text: "# todo.md in home (notes://home/todo.md)" }]);
    expect(((await rpc("resources/read", { uri: "status://now" })).result!.contents as Array<{ text: string }>)[0]!.text).toBe("ok");
    expect((await rpc("resources/read", { uri: "nothing://here" })).error?.code).toBe(-32602);
  });
});
