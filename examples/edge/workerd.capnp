# workerd's own config for the edge example (`workerd serve examples/edge/workerd.capnp`), next to
# the bundled worker.js (see the README: "Edge and other runtimes"). The key ring comes from the
# environment variable MCP_YIELD_KEYS as a text binding; on Cloudflare it is a secret.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [ (name = "main", worker = .mainWorker) ],
  sockets = [ (name = "http", address = "127.0.0.1:8787", http = (), service = "main") ],
);

const mainWorker :Workerd.Worker = (
  modules = [ (name = "worker", esModule = embed "worker.js") ],
  compatibilityDate = "2026-11-01",
  bindings = [ (name = "MCP_YIELD_KEYS", fromEnvironment = "MCP_YIELD_KEYS") ],
);
