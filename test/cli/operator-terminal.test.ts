import { runCli } from "../support/cli.js";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createRuntime, elicit, parseKeyRing, progress, sleep, step, tool } from "mcp-yield";
import { createRedisStore } from "mcp-yield/redis";
import { keygen } from "../../src/cli.js";
import { closedAfterEach, until } from "../support/instances.js";
import { dropPrefix, REDIS_URL, redisAvailable, testPrefix } from "../support/redis.js";

// Issue 56, point 7: an operator's terminal is safe and readable. Every command answers --help
// (exit 0) and `help <command>`; a client's text — escape sequences, C1 controls, bidirectional
// overrides — is printed escaped by every command; passwords never reach an error.

const ring = keygen("term");
const prefix = testPrefix("terminal");
const open = closedAfterEach();
afterAll(async () => {
  if (redisAvailable) await dropPrefix(prefix);
});

const cli = (argv: string[]) => runCli(argv, { env: { MCP_YIELD_KEYS: ring }, stdin: async () => "" });

// Characters a terminal acts on or reorders by: ESC (clear screen), BEL, CR, a C1 CSI, the
// right-to-left override, a left-to-right isolate.
const HOSTILE = "\u001b[2J\u0007\r\u009b31m\u202Eevil\u2066";
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe("help", () => {
  it("every command answers --help and -h with its usage, exit 0; help <command> too; an unknown one is named", async () => {
    for (const command of ["keygen", "inspect", "tasks", "dashboard", "export"]) {
      for (const flag of ["--help", "-h"]) {
        const got = await cli([command, flag]);
        expect(got).toMatchObject({ code: 0, err: "" });
        expect(got.out).toContain(`mcp-yield ${command}`);
      }
      expect((await cli(["help", command])).out).toBe((await cli([command, "--help"])).out);
    }
    // Help of a subcommand is the command's; after `--` it is an argument, not a flag.
    expect(await cli(["tasks", "list", "--help"])).toMatchObject({ code: 0, out: expect.stringContaining("mcp-yield tasks retry <task id>") });
    expect((await cli(["tasks", "show", "--", "--help"])).code).toBe(1);
    expect(await cli(["help", "nope"])).toMatchObject({ code: 2, err: 'no command "nope": one of keygen, inspect, tasks, dashboard, export' });
    expect(await cli(["--help"])).toMatchObject({ code: 0, out: expect.stringContaining("mcp-yield tasks list") });
  });
});

describe.skipIf(!redisAvailable)("a client's text in an operator's terminal", () => {
  it("tasks list, tasks show, inspect and their --json print controls and bidi overrides escaped; JSON still parses to the text", async () => {
    const store = await createRedisStore({ url: REDIS_URL, prefix });
    const runtime = createRuntime({ state: { keys: parseKeyRing(ring) }, store, onError: () => {} });
    open.push(store, runtime);
    // A task that reports the client's note as its progress and sleeps (its status message stays
    // the note), and a plain call that asks (its requestState carries the note).
    const napping = tool({
      name: "napping",
      description: "",
      input: z.object({ note: z.string() }),
      task: "required",
      async *run({ note }) {
        yield* step("echo", () => note);
        yield* progress(note);
        yield* sleep(600_000);
        return note;
      },
    });
    const asking = tool({
      name: "asking",
      description: "",
      input: z.object({ note: z.string() }),
      async *run({ note }) {
        yield* step("echo", () => note);
        yield* elicit("ok?", z.object({ ok: z.boolean() }), { key: "ok" });
        return note;
      },
    });
    runtime.define([napping, asking]);
    const flags = ["--redis", REDIS_URL, "--redis-prefix", prefix];
    const asTask = { clientCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } };
    const { taskId } = (await runtime.callTool(napping, { name: "napping", arguments: { note: HOSTILE } }, asTask)) as { taskId: string };
    await until(async () => ((await runtime.getTask({ taskId }, asTask)).statusMessage === HOSTILE ? true : undefined));
    const plain = (await runtime.callTool(asking, { name: "asking", arguments: { note: HOSTILE } }, { clientCapabilities: { elicitation: {} } })) as { requestState: string };

    const outputs = {
      list: await cli(["tasks", "list", ...flags]),
      show: await cli(["tasks", "show", taskId, ...flags]),
      inspect: await cli(["inspect", plain.requestState]),
    };
    for (const [name, got] of Object.entries(outputs)) {
      expect({ name, code: got.code, err: got.err }).toEqual({ name, code: 0, err: "" });
      expect(RAW.test(got.out), `${name} printed a raw control character`).toBe(false);
    }
    // The status message as it is (escaped here), the journal's JSON text (escaped by JSON, then here).
    expect(outputs.show.out).toContain("message   \\u001b[2J\\u0007\\u000d\\u009b31m\\u202eevil\\u2066");
    expect(outputs.show.out).toContain('step("echo") → "\\u001b[2J\\u0007\\r\\u009b31m\\u202eevil\\u2066"');
    expect(outputs.inspect.out).toContain("\\u202eevil");
    const json = await cli(["tasks", "show", taskId, ...flags, "--json"]);
    expect(RAW.test(json.out)).toBe(false);
    const parsed = JSON.parse(json.out) as { statusMessage?: string; journal: Array<{ value: string }> };
    expect(parsed.statusMessage).toBe(HOSTILE);
    expect(parsed.journal[0]!.value).toBe(JSON.stringify(HOSTILE));
  });

  it("no password reaches an error: in the URL's user part or as a password= parameter", async () => {
    const got = await cli(["tasks", "list", "--postgres", "postgres://ops:s3cret-one@127.0.0.1:1/x?password=s3cret-two&sslmode=disable"]);
    expect(got.code).toBe(1);
    expect(got.err).not.toMatch(/s3cret/);
  });
});
