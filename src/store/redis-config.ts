// store/redis-config.ts owns the look the Redis store takes at its server's configuration when
// it is made: what would break exactly-once — keys evicted, or nothing kept on disk — told once,
// naming the setting to change. A managed service that forbids CONFIG (ElastiCache renames it,
// ACLs may deny it) is not looked at; nothing else changes.

/** Runs one command (routed by `key` on a cluster). */
type Run = (key: string | undefined, args: string[], readonly?: boolean) => Promise<unknown>;

/** Warnings already given on the console in this process (one per problem, however many stores are made). */
const told = new Set<string>();

/** The values of `CONFIG GET` parameters, whatever the protocol's reply shape (RESP2 pairs, RESP3 map). */
function configValues(reply: unknown): Map<string, string> {
  const values = new Map<string, string>();
  if (Array.isArray(reply)) {
    const flat = reply.flat() as unknown[];
    for (let i = 0; i + 1 < flat.length; i += 2) values.set(String(flat[i]), String(flat[i + 1]));
  } else if (reply instanceof Map) {
    for (const [k, v] of reply) values.set(String(k), String(v));
  } else if (typeof reply === "object" && reply !== null) {
    for (const [k, v] of Object.entries(reply)) values.set(k, String(v));
  }
  return values;
}

/** What in `values` breaks exactly-once, in words that name the setting to change. */
export function configProblems(values: ReadonlyMap<string, string>, where: string): string[] {
  const problems: string[] = [];
  const policy = values.get("maxmemory-policy");
  if (policy !== undefined && policy !== "noeviction") {
    problems.push(
      `${where} has maxmemory-policy ${policy}: when it fills up it evicts keys — a task, a redeemed state, a claim — and a call may then run a completed step again or lose its task. Set maxmemory-policy noeviction (a full Redis then refuses writes: store_unavailable, nothing lost).`,
    );
  }
  const aof = values.get("appendonly");
  const save = values.get("save");
  if (aof === "no" && save !== undefined && save.trim() === "") {
    problems.push(
      `${where} keeps nothing on disk (appendonly no, save ""): a restart loses every task, finished ones included, and every redeemed state. Set appendonly yes (appendfsync always loses no acknowledged write; everysec up to a second of them).`,
    );
  } else if (aof === "no" && save !== undefined) {
    problems.push(
      `${where} persists only by snapshots (appendonly no, save "${save}"): a crash loses what was written since the last one — a step's result among it, so that step may run again. Set appendonly yes (appendfsync always for no loss).`,
    );
  }
  return problems;
}

/**
 * Look at the server's configuration (on a cluster, one node's) and warn about each problem —
 * through `warn`, or, given none, on the console once per process (however many stores are made).
 */
export async function checkRedisConfig(run: Run, cluster: boolean, warn: ((message: string) => void) | undefined): Promise<void> {
  let values: Map<string, string>;
  try {
    values = configValues(await run(undefined, ["CONFIG", "GET", "maxmemory-policy"], true));
    for (const [k, v] of configValues(await run(undefined, ["CONFIG", "GET", "appendonly"], true))) values.set(k, v);
    for (const [k, v] of configValues(await run(undefined, ["CONFIG", "GET", "save"], true))) values.set(k, v);
  } catch {
    return; // CONFIG forbidden (a managed service) or unanswered: nothing to say
  }
  for (const problem of configProblems(values, cluster ? "The Redis Cluster (one of its nodes)" : "The Redis server")) {
    if (warn !== undefined) warn(`mcp-yield: ${problem}`);
    else if (!told.has(problem)) {
      told.add(problem);
      console.warn(`mcp-yield: ${problem}`);
    }
  }
}
