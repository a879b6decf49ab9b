import type { z } from "zod";
import type { Capability, ContentBlock, PromptMessage, ResourceContents } from "../wire/index.js";
import type { Effect } from "./effects.js";
import { compileUriTemplate, type TemplateVariables } from "./uri-template.js";

export type { Capability };

/** What `run` receives besides its input. */
export interface RunContext {
  /** The authenticated principal of this request, if any. */
  readonly principal: string | undefined;
  /**
   * Whether this request's clientCapabilities declare `kind`. Recorded like `now()`: when a
   * later round replays this position, it gets the answer the first round got, so a branch
   * already taken is taken again. (Asking is still gated by what each request declares.)
   */
  can(kind: Capability): boolean;
  /** Aborted when the request running the current round is cancelled or its client disconnects. */
  readonly signal: AbortSignal;
  /**
   * A key that is the same in every round of this call (and on a repeated round), different for
   * every other call and every `name`: pass it to a payment or other non-idempotent API inside
   * a `step` so a repeated round cannot charge twice.
   */
  idempotencyKey(name: string): string;
  /**
   * Inside a task: the token that opens this call's next `waitForSignal(name, ...)` — for
   * `runtime.signal(token, value)`. The same for every replay of this point; used once.
   */
  signalToken(name: string): string;
  /**
   * Inside a task: the URL to POST the next `waitForSignal(name, ...)`'s value to (JSON) — for
   * a webhook, or a link to mail or show. Needs `createRuntime({ signals: { baseUrl } })`.
   */
  signalUrl(name: string): string;
}

/** A `run` body: `function*` or `async function*` yielding effects. */
export type RunGenerator<R> = Generator<Effect, R, unknown> | AsyncGenerator<Effect, R, unknown>;

const TOOL_ERROR = Symbol.for("mcp-yield.toolError");

/** A tool result the model should see as a failure (`isError: true`). */
export interface ToolError {
  readonly [TOOL_ERROR]: true;
  readonly message: string;
}

/** Return this from a tool's `run` to answer with an `isError` result carrying `message`. */
export function toolError(message: string): ToolError {
  return { [TOOL_ERROR]: true, message };
}

/** Whether a value is a `toolError(...)` result. */
export function isToolError(value: unknown): value is ToolError {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[TOOL_ERROR] === true;
}

/** A full tool result when a string is not enough. */
export interface ToolContent {
  content: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** What a tool's `run` may return: without `output`, a string, `toolError(...)` or `{ content }`; with it, the output's type or `toolError(...)`. */
export type ToolReturn<O> = [O] extends [undefined] ? string | ToolError | ToolContent : O | ToolError;

/**
 * Whether a tool runs as an MCP task (tasks extension), decided per request:
 * - `"never"` (default): always in the foreground (plain rounds);
 * - `"optional"`: a task when the request declares the extension, the foreground otherwise;
 * - `"required"`: a task; a request that does not declare the extension gets `-32021`.
 */
export type TaskSupport = "never" | "optional" | "required";

/**
 * Where a task-run call becomes a task: at its `"start"` (default: the first request already
 * answers with a `CreateTaskResult`), or at its first `yield* runAsTask()` (`"runAsTask"`:
 * plain rounds first, e.g. to gather input, then a task).
 */
export type TaskFrom = "start" | "runAsTask";

/**
 * What becomes of a task when a step runs out of attempts (`StepFailedError`) or its replay
 * diverges (the code changed under it): `"hold"` (default) keeps it `working`, held by nobody,
 * its status message "needs attention: <reason>", until an operator retries it (`tasks retry`:
 * it goes on from the failed step, completed steps not run again) or fails it (`tasks fail`) —
 * within its lifetime; `"fail"` ends it at once (a failed step: `completed` with an error
 * result, as a foreground call; a divergence: `failed`).
 */
export type TaskFailure = "hold" | "fail";

/** A tool defined with `tool(...)`: its listing, input and output schemas, task support and `run`. */
export interface ToolDefinition<I extends z.ZodObject = z.ZodObject, R = unknown> extends CodeVersions {
  readonly type: "tool";
  readonly name: string;
  readonly title: string | undefined;
  readonly description: string;
  readonly input: I;
  readonly output: z.ZodType | undefined;
  /** Changing it invalidates states minted by other versions (they get a divergence error). */
  readonly version: string | undefined;
  readonly task: TaskSupport;
  readonly taskFrom: TaskFrom;
  /** What becomes of a task whose step runs out of attempts or whose replay diverges (see `TaskFailure`). */
  readonly onTaskFailure: TaskFailure;
  /** The key a first request without one of its own is made idempotent under (see `tool`'s `idempotencyKey`). */
  readonly idempotencyKey: ((input: z.output<I>, ctx: IdempotencyContext) => string | undefined) | undefined;
  run(input: z.output<I>, ctx: RunContext): RunGenerator<R>;
}

/** What a tool's `idempotencyKey` is told of the request besides its arguments. */
export interface IdempotencyContext {
  /** The authenticated principal, if any (keys are scoped to it anyway). */
  readonly principal: string | undefined;
}

/**
 * What a definition knows of the code that served its calls before — for rolling deploys, where
 * instances of the old code and of the new serve the same calls for a while. A state or task
 * recorded under a `version` this code does not have, or with a `patched()` marker it does not
 * make, is handed back (`code_unknown`, retryable: another instance has that code) instead of
 * being ended — unless this code says it is over:
 */
export interface CodeVersions {
  /** Changing it ends calls and tasks of other versions listed in `retiredVersions` (a divergence); others are handed back. */
  readonly version: string | undefined;
  /**
   * Earlier versions whose calls and tasks end where this code meets them: a state gets
   * `journal_divergence` (`restart: true`), a task fails. A state or task recorded without a
   * version always ends at a versioned definition. Any other version is handed back.
   */
  readonly retiredVersions: readonly string[];
  /**
   * Ids of `patched()` calls this code no longer makes (deleted once no call older than the
   * patch was left): their markers in journals are passed over. A marker of any other patch this
   * code does not make is handed back — it comes from newer code, mid-deploy.
   */
  readonly removedPatches: readonly string[];
}

/** Whether calls of `version` (another than the code's) end here: retired by it, or recorded without a version at a versioned definition. */
export function isRetired(code: Pick<CodeVersions, "version" | "retiredVersions">, version: string | undefined): boolean {
  return version === undefined ? code.version !== undefined : code.retiredVersions.includes(version);
}

const NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** A list of strings given as a definition option, checked. */
function stringList(kind: string, name: string, what: string, value: unknown): readonly string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string" && v !== "")) throw new TypeError(`${kind} "${name}": ${what} must be an array of non-empty strings`);
  return Object.freeze([...value]);
}

/** The members every definition shares, checked once: a valid name and a function `run`. */
function common<S extends { name: string; version?: string | undefined; retiredVersions?: readonly string[] | undefined; removedPatches?: readonly string[] | undefined; run: unknown }>(
  kind: string,
  spec: S,
): { name: string; version: string | undefined; retiredVersions: readonly string[]; removedPatches: readonly string[]; run: S["run"] } {
  if (typeof spec.name !== "string" || !NAME.test(spec.name)) throw new TypeError(`${kind} name must be 1-128 characters of [A-Za-z0-9_.-], got ${JSON.stringify(spec.name)}`);
  if (typeof spec.run !== "function") throw new TypeError(`${kind} "${spec.name}": run must be a function* or async function*`);
  const retiredVersions = stringList(kind, spec.name, "retiredVersions", spec.retiredVersions);
  if (spec.version !== undefined && retiredVersions.includes(spec.version)) throw new TypeError(`${kind} "${spec.name}": retiredVersions lists its own version ${JSON.stringify(spec.version)}`);
  return { name: spec.name, version: spec.version, retiredVersions, removedPatches: stringList(kind, spec.name, "removedPatches", spec.removedPatches), run: spec.run };
}

/** Define a tool whose `run` may `yield*` effects. */
export function tool<I extends z.ZodObject, O extends z.ZodType | undefined = undefined>(spec: {
  name: string;
  title?: string | undefined;
  description: string;
  input: I;
  output?: O;
  version?: string | undefined;
  /** Earlier `version`s whose calls and tasks end here (see `CodeVersions`). */
  retiredVersions?: readonly string[] | undefined;
  /** `patched()` ids whose calls this code no longer makes (see `CodeVersions`). */
  removedPatches?: readonly string[] | undefined;
  /** Whether the tool may or must run as an MCP task (default `"never"`). */
  task?: TaskSupport | undefined;
  /** Where a task-run call becomes a task (default `"start"`). */
  taskFrom?: TaskFrom | undefined;
  /** A task whose step runs out of attempts or whose replay diverges: held for an operator (`"hold"`, default) or ended (`"fail"`). */
  onTaskFailure?: TaskFailure | undefined;
  /**
   * For clients that send no `_meta.idempotencyKey`: a key derived from the arguments (e.g. an
   * order id), under which a first request is answered once — a repeat gets the first one's
   * response or task (docs/exactly-once.md). `undefined`: no key. A client's own key wins.
   */
  idempotencyKey?: ((input: z.output<I>, ctx: IdempotencyContext) => string | undefined) | undefined;
  run: (input: z.output<I>, ctx: RunContext) => RunGenerator<ToolReturn<O extends z.ZodType ? z.output<O> : undefined>>;
}): ToolDefinition<I, ToolReturn<O extends z.ZodType ? z.output<O> : undefined>> {
  const task = spec.task ?? "never";
  if (task !== "never" && task !== "optional" && task !== "required") throw new TypeError(`tool "${spec.name}": task must be "never", "optional" or "required"`);
  const taskFrom = spec.taskFrom ?? "start";
  if (taskFrom !== "start" && taskFrom !== "runAsTask") throw new TypeError(`tool "${spec.name}": taskFrom must be "start" or "runAsTask"`);
  const onTaskFailure = spec.onTaskFailure ?? "hold";
  if (onTaskFailure !== "hold" && onTaskFailure !== "fail") throw new TypeError(`tool "${spec.name}": onTaskFailure must be "hold" or "fail"`);
  if (spec.idempotencyKey !== undefined && typeof spec.idempotencyKey !== "function") throw new TypeError(`tool "${spec.name}": idempotencyKey must be a function (args, ctx) => string | undefined`);
  return {
    type: "tool",
    ...common("tool", spec),
    title: spec.title,
    description: spec.description,
    input: spec.input,
    output: spec.output,
    task,
    taskFrom,
    onTaskFailure,
    idempotencyKey: spec.idempotencyKey,
  };
}

/** One argument of a prompt, as `prompts/list` shows it. */
export interface PromptArgument {
  name: string;
  description?: string | undefined;
  required?: boolean | undefined;
}

/** What a prompt's `run` may return. */
export type PromptReturn = string | PromptMessage[] | { description?: string; messages: PromptMessage[] };

/** A prompt defined with `prompt(...)`. */
export interface PromptDefinition extends CodeVersions {
  readonly type: "prompt";
  readonly name: string;
  readonly title: string | undefined;
  readonly description: string;
  readonly arguments: readonly PromptArgument[];
  readonly version: string | undefined;
  run(args: Record<string, string>, ctx: RunContext): RunGenerator<PromptReturn>;
}

/** Define a prompt whose `run` may `yield*` effects and returns messages (a string becomes one user message). */
export function prompt(spec: {
  name: string;
  title?: string | undefined;
  description: string;
  arguments?: PromptArgument[] | undefined;
  version?: string | undefined;
  /** Earlier `version`s whose calls and tasks end here (see `CodeVersions`). */
  retiredVersions?: readonly string[] | undefined;
  /** `patched()` ids whose calls this code no longer makes (see `CodeVersions`). */
  removedPatches?: readonly string[] | undefined;
  run: (args: Record<string, string>, ctx: RunContext) => RunGenerator<PromptReturn>;
}): PromptDefinition {
  return { type: "prompt", ...common("prompt", spec), title: spec.title, description: spec.description, arguments: spec.arguments ?? [] };
}

/** What a resource's `run` may return (a string becomes one text content with the resource's uri). */
export type ResourceReturn = string | ResourceContents[] | { contents: ResourceContents[] };

/** A resource defined with `resource(...)`. */
export interface ResourceDefinition extends CodeVersions {
  readonly type: "resource";
  readonly uri: string;
  readonly name: string;
  readonly description: string | undefined;
  readonly mimeType: string | undefined;
  readonly version: string | undefined;
  run(uri: string, ctx: RunContext): RunGenerator<ResourceReturn>;
}

/** Define a resource whose `run` may `yield*` effects and returns its contents. */
export function resource(spec: {
  uri: string;
  name: string;
  description?: string | undefined;
  mimeType?: string | undefined;
  version?: string | undefined;
  /** Earlier `version`s whose calls and tasks end here (see `CodeVersions`). */
  retiredVersions?: readonly string[] | undefined;
  /** `patched()` ids whose calls this code no longer makes (see `CodeVersions`). */
  removedPatches?: readonly string[] | undefined;
  run: (uri: string, ctx: RunContext) => RunGenerator<ResourceReturn>;
}): ResourceDefinition {
  if (typeof spec.uri !== "string" || !/^[A-Za-z][A-Za-z0-9+.-]*:/.test(spec.uri)) throw new TypeError(`resource uri must be an absolute URI, got ${JSON.stringify(spec.uri)}`);
  return { type: "resource", ...common("resource", spec), uri: spec.uri, description: spec.description, mimeType: spec.mimeType };
}

/** A resource template defined with `resourceTemplate(...)`: one definition for every URI it matches. */
export interface ResourceTemplateDefinition<V = Record<string, string>> extends CodeVersions {
  readonly type: "resourceTemplate";
  readonly uriTemplate: string;
  readonly name: string;
  readonly title: string | undefined;
  readonly description: string | undefined;
  readonly mimeType: string | undefined;
  readonly version: string | undefined;
  /** The variables of a URI this template matches, checked (`undefined`: no match; throws the variables schema's error). */
  match(uri: string): { ok: true; variables: V } | { ok: false; problem: string } | undefined;
  run(variables: V, uri: string, ctx: RunContext): RunGenerator<ResourceReturn>;
}

/** What every `resourceTemplate` spec has besides its `run` (and optional `variables`). */
export interface ResourceTemplateSpec<T extends string> {
  uriTemplate: T;
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  mimeType?: string | undefined;
  version?: string | undefined;
  /** Earlier `version`s whose calls and tasks end here (see `CodeVersions`). */
  retiredVersions?: readonly string[] | undefined;
  /** `patched()` ids whose calls this code no longer makes (see `CodeVersions`). */
  removedPatches?: readonly string[] | undefined;
}

/**
 * Define a resource template (`uriTemplate: "notes://{folder}/{+path}"`) whose `run` may
 * `yield*` effects: it serves every URI the template matches, with the variables typed from
 * the template (each a string) or, with `variables`, parsed by that zod object. A round's state
 * is bound to the concrete URI read. Supported: `{name}` (one path segment) and `{+name}`
 * (may contain `/`), percent-decoded; other RFC 6570 operators are refused here.
 */
export function resourceTemplate<T extends string, V extends z.ZodObject>(
  spec: ResourceTemplateSpec<T> & {
    /** Parses the template's variables (e.g. `z.object({ id: z.coerce.number().int() })`); a URI whose variables fail it is refused with -32602. */
    variables: V;
    run: (variables: z.output<V>, uri: string, ctx: RunContext) => RunGenerator<ResourceReturn>;
  },
): ResourceTemplateDefinition<z.output<V>>;
/** `resourceTemplate` without a `variables` schema: each variable is the decoded string matched. */
export function resourceTemplate<T extends string>(
  spec: ResourceTemplateSpec<T> & { run: (variables: TemplateVariables<T>, uri: string, ctx: RunContext) => RunGenerator<ResourceReturn> },
): ResourceTemplateDefinition<TemplateVariables<T>>;
export function resourceTemplate(
  spec: ResourceTemplateSpec<string> & { variables?: z.ZodObject; run: (variables: never, uri: string, ctx: RunContext) => RunGenerator<ResourceReturn> },
): ResourceTemplateDefinition<unknown> {
  const compiled = compileUriTemplate(spec.uriTemplate);
  const schema = spec.variables;
  const match = (uri: string): { ok: true; variables: unknown } | { ok: false; problem: string } | undefined => {
    const raw = compiled.match(uri);
    if (raw === undefined) return undefined;
    if (schema === undefined) return { ok: true, variables: raw };
    const parsed = schema.safeParse(raw);
    return parsed.success ? { ok: true, variables: parsed.data } : { ok: false, problem: parsed.error.issues.map((i) => `${i.path.join(".") || "variables"}: ${i.message}`).join("; ") };
  };
  return {
    type: "resourceTemplate",
    ...common("resource template", spec),
    uriTemplate: spec.uriTemplate,
    title: spec.title,
    description: spec.description,
    mimeType: spec.mimeType,
    match,
  } as ResourceTemplateDefinition<unknown>;
}

/** Any definition `register` and the runtime accept. */
export type Definition = ToolDefinition | PromptDefinition | ResourceDefinition | ResourceTemplateDefinition<unknown>;
