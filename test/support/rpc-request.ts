/**
 * A 2026-07-28 request as a client sends it over stateless HTTP: the `_meta` envelope, and the
 * headers a server routes by (`Mcp-Method`, and `Mcp-Name` from the task id, tool name or uri).
 */
export function rpcRequest(id: number, method: string, params: Record<string, unknown>, capabilities: Record<string, unknown> = { elicitation: {} }): Request {
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
    "io.modelcontextprotocol/clientCapabilities": capabilities,
  };
  const name = [params.taskId, params.name, params.uri].find((v): v is string => typeof v === "string");
  return new Request("http://in-process/mcp", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": method,
      ...(name !== undefined ? { "mcp-name": name } : {}),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id, method, params: { ...params, _meta: meta } }),
  });
}
