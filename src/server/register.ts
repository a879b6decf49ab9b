import { type McpServer, ResourceTemplate, type ServerContext } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { Definition, PromptDefinition, ResourceDefinition, ResourceTemplateDefinition, ToolDefinition } from "../authoring/definitions.js";
import { createRuntime, type Runtime, type RuntimeOptions } from "../runtime/runtime.js";
import { ErrorCode, type MultiRoundMethod, ProtocolError, TASKS_EXTENSION } from "../wire/index.js";
import { defaultPrincipal, multiRoundParams, type PrincipalOf, requestInfoOf } from "./context.js";
import { listedSchema, promptArgsSchema } from "./listed-schemas.js";

/** Options of `register`. */
export interface RegisterOptions {
  /** A runtime to share between requests (build it once), or options to build one. */
  runtime: Runtime | RuntimeOptions;
  /** Who the caller is, for binding states; default: `ctx.http.authInfo.clientId`. */
  principal?: PrincipalOf;
}

type Handler = (request: { params: Record<string, unknown> }, ctx: ServerContext) => Promise<unknown>;

const unreachable = () => {
  throw new Error("mcp-yield: this handler is replaced by the runtime's dispatcher");
};

type LowServer = McpServer["server"];

/** The SDK's own handler for `method`, through its protected accessor (or its handler table). */
function sdkHandler(low: LowServer, method: string): Handler | undefined {
  const internals = low as unknown as { _getRequestHandler?: (m: string) => Handler | undefined; _requestHandlers?: unknown };
  if (typeof internals._getRequestHandler === "function") return internals._getRequestHandler.call(low, method);
  return internals._requestHandlers instanceof Map ? (internals._requestHandlers.get(method) as Handler | undefined) : undefined;
}

/** Names registered with the SDK's own API for `method` (what an unreachable chain would break). */
function sdkNativeNames(server: McpServer, method: MultiRoundMethod): string[] {
  const fields = method === "tools/call" ? ["_registeredTools"] : method === "prompts/get" ? ["_registeredPrompts"] : ["_registeredResources", "_registeredResourceTemplates"];
  return fields.flatMap((field) => {
    const registered = (server as unknown as Record<string, unknown>)[field];
    // Unknown layout: assume there may be SDK-native definitions (refusing is the safe side).
    if (typeof registered !== "object" || registered === null) return ["(definitions of unknown names)"];
    return Object.keys(registered);
  });
}

// The SDK validates params with these before our handler runs: permissive, so that the
// capability gate (-32021) is answered before any complaint about the params.
const ANY = { params: z.looseObject({}), result: z.looseObject({}) };

/**
 * The tasks extension on this server, when any tool may run as a task: the capability in
 * `server/discover`, and `tasks/get`, `tasks/update`, `tasks/cancel` answered by the runtime
 * (`tasks/result` and `tasks/list` do not exist: the SDK answers `-32601`). The runtime also
 * learns the definitions, to run a task it takes over from an instance that died.
 */
function serveTasks(server: McpServer, definitions: readonly Definition[], runtime: Runtime, principalOf: PrincipalOf): void {
  runtime.define(definitions);
  if (!definitions.some((d) => d.type === "tool" && d.task !== "never")) return;
  const low = server.server;
  low.registerCapabilities({ extensions: { [TASKS_EXTENSION]: {} } });
  const methods = { "tasks/get": runtime.getTask, "tasks/update": runtime.updateTask, "tasks/cancel": runtime.cancelTask } as const;
  for (const [method, handle] of Object.entries(methods)) {
    // The SDK lifts inputResponses out of every request's params: put them back for tasks/update.
    const paramsOf = (params: Record<string, unknown>, ctx: ServerContext) =>
      method === "tasks/update" && ctx.mcpReq.inputResponses !== undefined ? { ...params, inputResponses: ctx.mcpReq.inputResponses } : params;
    low.setRequestHandler(
      method as "tasks/get",
      ANY as never,
      ((params: Record<string, unknown>, ctx: ServerContext) => handle(paramsOf(params, ctx), requestInfoOf(server, ctx, principalOf))) as never,
    );
  }
}

/**
 * Register mcp-yield definitions on an `McpServer`. They are listed by the SDK as usual; their
 * calls go to the runtime through low-level handlers, so a bad `requestState`, a divergence or
 * a missing capability reaches the client as a JSON-RPC error (the SDK's own `tools/call` turns
 * every thrown error into an `isError` result). Tools, prompts and resources registered on the
 * same server with the SDK's own API keep working: unknown names go to the SDK's handler. If a
 * future SDK version hides that handler while SDK-native definitions are registered (register
 * them before calling this), `register` throws instead of silently breaking them.
 */
export function register(server: McpServer, definitions: readonly Definition[], options: RegisterOptions): Runtime {
  const runtime: Runtime = "callTool" in options.runtime ? options.runtime : createRuntime(options.runtime);
  const principalOf = options.principal ?? defaultPrincipal;
  const tools = new Map<string, ToolDefinition>();
  const prompts = new Map<string, PromptDefinition>();
  const resources = new Map<string, ResourceDefinition>();
  const templates: ResourceTemplateDefinition<unknown>[] = [];

  for (const def of definitions) {
    if (def.type === "tool") {
      tools.set(def.name, def);
      server.registerTool(
        def.name,
        {
          ...(def.title !== undefined ? { title: def.title } : {}),
          description: def.description,
          inputSchema: listedSchema(def.input),
          ...(def.output ? { outputSchema: listedSchema(def.output) } : {}),
        },
        unreachable,
      );
    } else if (def.type === "prompt") {
      prompts.set(def.name, def);
      server.registerPrompt(def.name, { ...(def.title !== undefined ? { title: def.title } : {}), description: def.description, argsSchema: promptArgsSchema(def) }, unreachable);
    } else if (def.type === "resource") {
      resources.set(def.uri, def);
      server.registerResource(def.name, def.uri, { ...(def.description ? { description: def.description } : {}), ...(def.mimeType ? { mimeType: def.mimeType } : {}) }, unreachable);
    } else {
      templates.push(def);
      // Listed by the SDK under resources/templates/list; reads come to us (see the route below).
      server.registerResource(
        def.name,
        new ResourceTemplate(def.uriTemplate, { list: undefined }),
        { ...(def.title ? { title: def.title } : {}), ...(def.description ? { description: def.description } : {}), ...(def.mimeType ? { mimeType: def.mimeType } : {}) },
        unreachable,
      );
    }
  }

  const low = server.server;
  const route = <D>(
    method: MultiRoundMethod,
    table: Map<string, D>,
    nameOf: (params: Record<string, unknown>) => unknown,
    run: (def: D, params: Record<string, unknown>, ctx: ServerContext) => Promise<unknown>,
    /** Definitions found by matching rather than by name (resource templates), tried after the table. */
    fallback: (name: string) => D | undefined = () => undefined,
    owned = table.size,
  ) => {
    if (owned === 0) return;
    // The SDK's handler for names we do not own (its McpServer dispatcher). The SDK offers no
    // public way to chain to it; without one, SDK-native definitions would silently become
    // "unknown": refuse to register instead.
    const previous = sdkHandler(low, method);
    if (previous === undefined) {
      const native = sdkNativeNames(server, method).filter((n) => !table.has(n) && !templates.some((t) => t.name === n));
      if (native.length > 0) {
        throw new Error(
          `mcp-yield register(): this SDK version offers no way to reach its own ${method} handler, so the SDK-native ${native.join(", ")} would stop working. Define them with mcp-yield, or use an SDK version register() supports (@modelcontextprotocol/server 2.4.x).`,
        );
      }
    }
    low.setRequestHandler(method, (async (request: { params: Record<string, unknown> }, ctx: ServerContext) => {
      const name = nameOf(request.params);
      const def = typeof name === "string" ? (table.get(name) ?? fallback(name)) : undefined;
      if (def === undefined) {
        if (previous) return previous(request, ctx);
        throw new ProtocolError(ErrorCode.InvalidParams, `Unknown ${method === "resources/read" ? "resource" : method === "prompts/get" ? "prompt" : "tool"}: ${String(name)}`);
      }
      return run(def, { ...request.params, ...multiRoundParams(ctx) }, ctx);
    }) as never);
  };

  route(
    "tools/call",
    tools,
    (p) => p.name,
    (def, params, ctx) => runtime.callTool(def, params, requestInfoOf(server, ctx, principalOf, params)),
  );
  serveTasks(server, definitions, runtime, principalOf);
  route(
    "prompts/get",
    prompts,
    (p) => p.name,
    (def, params, ctx) => runtime.getPrompt(def, params, requestInfoOf(server, ctx, principalOf, params)),
  );
  route<ResourceDefinition | ResourceTemplateDefinition<unknown>>(
    "resources/read",
    resources,
    (p) => p.uri,
    (def, params, ctx) => runtime.readResource(def, params, requestInfoOf(server, ctx, principalOf, params)),
    // The first template that matches serves the uri (a matched uri with bad variables is its -32602).
    (uri) => templates.find((t) => t.match(uri) !== undefined),
    resources.size + templates.length,
  );
  return runtime;
}
