import { mkdirSync, statSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createRuntime, createTaskAdmin, elicit, progress, type Runtime, sleep, step, type Store, tool, type ToolDefinition, waitForSignal } from "mcp-yield";
import { createPostgresStore } from "mcp-yield/postgres";
import { CHROMIUM, chromiumAvailable } from "../support/chromium.js";
import { until } from "../support/instances.js";
import { testKey } from "../support/keys.js";
import { dropSchema, POSTGRES_URL, postgresAvailable, testSchema } from "../support/postgres.js";
import { startProcess, stopProcess, type Started } from "../support/processes.js";

// Issue 56, point 3: `npx mcp-yield dashboard` over a real PostgreSQL store holding tasks in
// every state, driven in a real headless Chromium: the list with filters and live status, a
// held task's timeline, Retry to completion, client text shown as text, read-only by default.
// Screenshots go to results/dashboard/ (the test's output, not the repository).

const SHOTS = join(import.meta.dirname, "../../results/dashboard");
const ROOT = join(import.meta.dirname, "../..");
const schema = testSchema("dashboard");
const HOSTILE = '<img src=x onerror="window.__pwned=1">\u202Eexe.txt\u001b[31m';
const info = { clientCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} }, elicitation: {} }, principal: "ops@example.com" };

const service = { up: false };
const release = { go: (): void => {} };
const held = new Promise<void>((resolve) => (release.go = resolve));
const defs: ToolDefinition[] = [
  tool({
    name: "pay",
    description: "",
    input: z.object({ amount: z.number() }),
    task: "required",
    async *run({ amount }) {
      const quote = yield* step("quote", () => amount * 2);
      yield* progress("quoted");
      const receipt = yield* step(
        "charge",
        async () => {
          await new Promise((r) => setTimeout(r, 30));
          if (!service.up) throw new Error("card service down");
          return `R-${quote}`;
        },
        { retry: { attempts: 2, initialMs: 5 } },
      );
      yield* sleep(20);
      return yield* step("mail", () => `${receipt} mailed`);
    },
  }),
  tool({
    name: "approve",
    description: "",
    input: z.object({}),
    task: "required",
    async *run() {
      const ok = yield* elicit("Approve?", z.object({ ok: z.boolean() }), { key: "approval" });
      return String(ok.action);
    },
  }),
  tool({
    name: "nap",
    description: "",
    input: z.object({}),
    task: "required",
    async *run() {
      yield* sleep(600_000);
      return "awake";
    },
  }),
  tool({
    name: "wait",
    description: "",
    input: z.object({}),
    task: "required",
    async *run() {
      const v = yield* waitForSignal("go", z.string());
      return String(v.status);
    },
  }),
  tool({
    name: "spin",
    description: "",
    input: z.object({}),
    task: "required",
    async *run() {
      return yield* step("spin", () => held.then(() => "spun"));
    },
  }),
  tool({
    name: "echo",
    description: "",
    input: z.object({ text: z.string() }),
    task: "required",
    async *run({ text }) {
      yield* progress(text);
      return text;
    },
  }),
];

describe.skipIf(!postgresAvailable || !chromiumAvailable)("npx mcp-yield dashboard in a real browser", () => {
  let store: Store;
  let runtime: Runtime;
  let browser: Browser;
  const dashboards: Started[] = [];
  const ids = {} as Record<"pay" | "approve" | "nap" | "wait" | "spin" | "echo" | "cancelled" | "failed", string>;

  const startDashboard = async (...flags: string[]) => {
    const started = await startProcess(
      process.execPath,
      ["--conditions=mcp-yield-source", "--import", "tsx", "src/cli.ts", "dashboard", "--postgres", POSTGRES_URL, "--postgres-schema", schema, "--port", "0", ...flags],
      { cwd: ROOT, env: { ...process.env }, ready: /dashboard: (http:\/\/\S+) /, timeoutMs: 60_000, what: "mcp-yield dashboard" },
    );
    dashboards.push(started);
    return started.match[1]!;
  };
  const shot = async (page: Page, name: string) => {
    const path = join(SHOTS, `${name}.png`);
    await page.screenshot({ path, fullPage: true });
    expect(statSync(path).size).toBeGreaterThan(5_000);
    console.log(`screenshot: ${path}`);
  };
  const statusOf = (page: Page, id: string) => page.$eval(`tr[data-task-id="${id}"] [data-status]`, (e) => e.getAttribute("data-status")).catch(() => undefined);

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    store = await createPostgresStore({ connectionString: POSTGRES_URL, schema });
    runtime = createRuntime({ state: { keys: [testKey("d", 41)] }, store, onError: () => {}, tasks: { sweepMs: 50, leaseMs: 2000, pollIntervalMs: 100 } });
    runtime.define(defs);
    const start = async (name: string, args: Record<string, unknown> = {}) => {
      const def = defs.find((d) => d.name === name)!;
      return ((await runtime.callTool(def, { name, arguments: args }, info)) as { taskId: string }).taskId;
    };
    const admin = createTaskAdmin({ store });
    ids.pay = await start("pay", { amount: 21 });
    ids.approve = await start("approve");
    ids.nap = await start("nap");
    ids.wait = await start("wait");
    ids.spin = await start("spin");
    ids.echo = await start("echo", { text: HOSTILE });
    ids.cancelled = await start("nap");
    ids.failed = await start("pay", { amount: 1 });
    await until(async () => ((await admin.list({ needsAttention: true })).length === 2 ? true : undefined), 20_000);
    await runtime.cancelTask({ taskId: ids.cancelled }, info);
    await admin.fail(ids.failed, "given up by the operator");
    await until(async () => ((await admin.show(ids.echo))?.status === "completed" ? true : undefined), 20_000);
    browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
  }, 120_000);

  afterAll(async () => {
    release.go();
    await browser?.close();
    for (const d of dashboards) await stopProcess(d.child);
    await runtime?.close();
    await store?.close();
    await dropSchema(schema);
  }, 60_000);

  it("lists tasks in every state with live status, filters them, and shows a held task's timeline; Retry takes it to completed", async () => {
    const url = await startDashboard("--allow-actions");
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 800 });
    const dialogs: string[] = [];
    page.on("dialog", (d) => void (dialogs.push(d.message()), d.dismiss()));
    await page.goto(url);
    await page.waitForSelector(`tr[data-task-id="${ids.echo}"]`, { timeout: 20_000 });
    const states = await page.$$eval("tr[data-task-id] [data-status]", (els) => els.map((e) => e.getAttribute("data-status")));
    expect(new Set(states)).toEqual(new Set(["working", "input_required", "completed", "failed", "cancelled", "held"]));
    expect(await statusOf(page, ids.approve)).toBe("input_required");
    expect(await page.$eval(`tr[data-task-id="${ids.nap}"] td.state`, (e) => e.textContent)).toMatch(/^asleep until /);
    expect(await page.$eval(`tr[data-task-id="${ids.wait}"] td.state`, (e) => e.textContent)).toBe('waiting for signal "go"');
    expect(await page.$eval(`tr[data-task-id="${ids.spin}"] td.state`, (e) => e.textContent)).toMatch(/^running on instance /);
    expect(await page.$eval("#mode", (e) => e.textContent)).toBe("actions allowed");
    await shot(page, "list-every-state");

    // Filters: needs attention, then a status and a tool.
    await page.click('input[name="needsAttention"]');
    await page.waitForFunction((n) => document.querySelectorAll("tr[data-task-id]").length === n, { timeout: 10_000 }, 1);
    expect(await page.$$eval("tr[data-task-id]", (rows) => rows.map((r) => r.getAttribute("data-task-id")))).toEqual([ids.pay]);
    expect(page.url()).toContain("needsAttention=1");
    await shot(page, "list-needs-attention");
    await page.click('input[name="needsAttention"]');
    await page.click('input[name="status"][value="working"]');
    await page.type('input[name="tool"]', "nap");
    await page.waitForFunction((id) => [...document.querySelectorAll("tr[data-task-id]")].map((r) => r.getAttribute("data-task-id")).join() === id, { timeout: 10_000 }, ids.nap);

    // The held task's page: its timeline (steps with durations, the failed attempts, progress).
    await page.goto(`${url}task/${ids.pay}`);
    await page.waitForSelector("#timeline tr[data-kind]", { timeout: 10_000 });
    const timeline = await page.$$eval("#timeline tr[data-kind]", (rows) => rows.map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent)));
    expect(timeline.map((r) => r[2])).toEqual(["step", "progress", "attempt", "sleep", "attempt"]); // the retry delay is a durable sleep
    expect(timeline[0]![3]).toBe('step("quote")');
    expect(timeline[2]![4]).toMatch(/^failed: Error: card service down/);
    expect(timeline[2]![5]).toMatch(/^≈ \d+ ms$/);
    expect(Number(/\d+/.exec(timeline[2]![5]!)![0])).toBeGreaterThanOrEqual(25); // the attempt ran 30 ms
    expect(await page.$eval('[data-field="state"]', (e) => e.textContent)).toMatch(/^needs attention since .*card service down/);
    expect(await page.$$eval("button[data-action]", (b) => b.map((x) => x.getAttribute("data-action")))).toEqual(["cancel", "retry", "fail"]);
    await shot(page, "held-task");

    service.up = true;
    await page.click('button[data-action="retry"]');
    await page.waitForFunction(() => document.querySelector("h1 [data-status]")?.getAttribute("data-status") === "completed", { timeout: 20_000 });
    expect(await page.$eval("#message", (e) => e.textContent)).toBe("retry: the task is now working");
    const done = await page.$$eval("#timeline tr[data-kind]", (rows) => rows.map((r) => r.getAttribute("data-kind")));
    // The retried attempt ran about 30 ms: the time the task was held is not counted in it.
    const retriedTook = await page.$eval('#timeline tr[data-kind="attempt"] td:last-child', (e) => e.textContent ?? "");
    expect(Number(/\d+/.exec(retriedTook)![0])).toBeLessThan(1000);
    expect(done).toEqual(["step", "progress", "attempt", "sleep", "step"]);
    expect(await page.$eval("#result", (e) => e.textContent)).toContain("R-42 mailed");
    expect(await page.$$eval("button[data-action]", (b) => b.length)).toBe(0);
    await shot(page, "retried-task-completed");
    expect(dialogs).toEqual([]);
  }, 120_000);

  it("shows a client's markup, escape sequences and bidirectional overrides as text", async () => {
    const url = await startDashboard();
    const page = await browser.newPage();
    const dialogs: string[] = [];
    page.on("dialog", (d) => void (dialogs.push(d.message()), d.dismiss()));
    await page.goto(`${url}task/${ids.echo}`);
    await page.waitForSelector("#result", { timeout: 10_000 });
    const result = await page.$eval("#result", (e) => e.textContent ?? "");
    expect(result).toContain('<img src=x onerror=\\"window.__pwned=1\\">');
    expect(result).toContain("\\\\u202eexe.txt\\\\u001b[31m");
    expect(result).not.toMatch(/[\u202e\u001b]/);
    expect(await page.evaluate(() => document.querySelectorAll("img").length)).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(dialogs).toEqual([]);
    await shot(page, "client-text-escaped");
  }, 60_000);

  it("read-only unless told: no buttons, actions refused; requests addressed to another host refused", async () => {
    const url = await startDashboard();
    const page = await browser.newPage();
    await page.goto(`${url}task/${ids.approve}`);
    await page.waitForSelector("h1 [data-status]", { timeout: 10_000 });
    expect(await page.$eval("#mode", (e) => e.textContent)).toBe("read-only");
    expect(await page.$$eval("button[data-action]", (b) => b.length)).toBe(0);
    const refused = await page.evaluate(async (id) => {
      const res = await fetch(`/api/tasks/${id}/cancel`, { method: "POST", headers: { "x-dashboard-token": "" } });
      return { status: res.status, body: await res.json() };
    }, ids.approve);
    expect(refused).toEqual({ status: 403, body: { error: expect.stringContaining("start it with --allow-actions") } });
    expect((await createTaskAdmin({ store }).show(ids.approve))!.status).toBe("input_required");
    const rebound = await new Promise<number>((resolve, reject) => {
      const req = request(`${url}api/tasks`, { headers: { host: "attacker.example:80" } }, (res) => resolve(res.statusCode ?? 0));
      req.on("error", reject);
      req.end();
    });
    expect(rebound).toBe(421);
  }, 60_000);

  it("an action without the page's token is refused even when actions are allowed", async () => {
    const url = await startDashboard("--allow-actions");
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${url}api/tasks/${ids.nap}/cancel`, { method: "POST" }, (res) => resolve(res.statusCode ?? 0));
      req.on("error", reject);
      req.end("{}");
    });
    expect(status).toBe(403);
    expect((await createTaskAdmin({ store }).show(ids.nap))!.status).toBe("working");
  }, 60_000);
});
