// The dashboard's page: one HTML shell, its style and its script (no framework, nothing fetched
// from elsewhere — the content security policy allows only this origin). The script builds the
// document with text nodes only: nothing a client wrote is ever parsed as markup.

export const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="dashboard-token" content="%TOKEN%">
<meta name="dashboard-actions" content="%ACTIONS%">
<title>mcp-yield tasks</title>
<link rel="stylesheet" href="/app.css">
</head>
<body>
<header><a href="/" class="brand">mcp-yield tasks</a><span id="mode"></span><span id="live"></span></header>
<main id="main"></main>
<script src="/app.js"></script>
</body>
</html>
`;

export const DASHBOARD_CSS = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d1d1f; background: #fafafa; }
header { display: flex; gap: 1em; align-items: baseline; padding: .6em 1em; background: #20232a; color: #eee; }
header a.brand { color: #fff; font-weight: 600; text-decoration: none; }
#mode { font-size: 12px; padding: 1px 6px; border-radius: 8px; background: #444; }
#live { margin-left: auto; font-size: 12px; color: #aaa; }
main { padding: 1em; }
form.filters { display: flex; flex-wrap: wrap; gap: .8em; align-items: center; margin-bottom: 1em; }
form.filters fieldset { border: 1px solid #ccc; padding: .2em .6em; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid #e5e5e5; vertical-align: top; }
th { background: #f0f0f0; font-weight: 600; }
td.mono, .mono { font-family: ui-monospace, monospace; font-size: 12px; word-break: break-all; }
.status { display: inline-block; padding: 0 6px; border-radius: 8px; font-size: 12px; color: #fff; background: #777; }
.status.working { background: #2b6cb0; } .status.input_required { background: #b7791f; }
.status.completed { background: #2f855a; } .status.failed { background: #c53030; }
.status.cancelled { background: #718096; } .status.held { background: #d53f8c; }
.kind { font-size: 12px; color: #555; }
dl.fields { display: grid; grid-template-columns: max-content auto; gap: 2px 1em; }
dl.fields dt { color: #666; }
.actions { margin: 1em 0; display: flex; gap: .5em; align-items: center; }
button { padding: 3px 10px; }
#message { margin: .5em 0; min-height: 1.4em; }
#message.error { color: #c53030; }
pre { background: #fff; border: 1px solid #e5e5e5; padding: .6em; white-space: pre-wrap; word-break: break-all; }
.pager { margin-top: .8em; display: flex; gap: .5em; }
`;

export const DASHBOARD_SCRIPT = `"use strict";
(() => {
  const meta = (name) => document.querySelector('meta[name="' + name + '"]').content;
  const TOKEN = meta("dashboard-token");
  const ACTIONS = meta("dashboard-actions") === "1";
  const STATUSES = ["working", "input_required", "completed", "failed", "cancelled"];
  const main = document.getElementById("main");
  document.getElementById("mode").textContent = ACTIONS ? "actions allowed" : "read-only";

  /** An element with properties and children; strings become text nodes (never markup). */
  function el(tag, props, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (k === "class") e.className = v;
      else if (k.startsWith("data-") || k === "for") e.setAttribute(k, v);
      else e[k] = v;
    }
    for (const c of children) if (c !== undefined && c !== null) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return e;
  }
  const held = (t) => t.status === "working" && typeof t.state === "string" && t.state.startsWith("needs attention");
  const badge = (t) => el("span", { class: "status " + (held(t) ? "held" : t.status), "data-status": held(t) ? "held" : t.status }, held(t) ? "needs attention" : t.status);
  const age = (ms) => { const s = Math.floor(ms / 1000); return s >= 86400 ? Math.floor(s / 86400) + "d" : s >= 3600 ? Math.floor(s / 3600) + "h" + Math.floor((s % 3600) / 60) + "m" : s >= 60 ? Math.floor(s / 60) + "m" + (s % 60) + "s" : s + "s"; };
  const live = (ok) => { document.getElementById("live").textContent = (ok ? "live · " : "store unreachable · ") + new Date().toLocaleTimeString(); };

  async function api(path, init) {
    const res = await fetch(path, init);
    const body = await res.json();
    if (!res.ok) throw new Error(body.error || res.statusText);
    return body;
  }

  // ---- the list ----
  function listView() {
    const query = new URLSearchParams(location.search);
    let cursor = query.get("after") || undefined;
    const pages = [];
    const form = el("form", { class: "filters", onsubmit: (e) => e.preventDefault() });
    const statusBoxes = STATUSES.map((s) => el("input", { type: "checkbox", name: "status", value: s, checked: (query.get("status") || "").split(",").includes(s) }));
    const attention = el("input", { type: "checkbox", name: "needsAttention", checked: query.get("needsAttention") === "1" });
    const tool = el("input", { type: "text", name: "tool", placeholder: "tool", value: query.get("tool") || "" });
    const principal = el("input", { type: "text", name: "principal", placeholder: "principal", value: query.get("principal") || "" });
    const since = el("select", { name: "since" }, ...[["", "any time"], ["15", "last 15 min"], ["60", "last hour"], ["1440", "last day"], ["10080", "last week"]].map(([v, label]) => el("option", { value: v, selected: query.get("since") === v }, label)));
    form.append(
      el("fieldset", {}, el("legend", {}, "status"), ...statusBoxes.flatMap((b) => [el("label", {}, b, " " + b.value)]), el("label", {}, attention, " needs attention")),
      tool, principal, since,
    );
    const table = el("table", { id: "tasks" });
    const pager = el("div", { class: "pager" });
    main.replaceChildren(form, table, pager);

    const filters = () => {
      const q = new URLSearchParams();
      const statuses = statusBoxes.filter((b) => b.checked).map((b) => b.value);
      if (statuses.length > 0) q.set("status", statuses.join(","));
      if (attention.checked) q.set("needsAttention", "1");
      if (tool.value.trim()) q.set("tool", tool.value.trim());
      if (principal.value.trim()) q.set("principal", principal.value.trim());
      if (since.value) q.set("since", since.value);
      return q;
    };
    form.addEventListener("change", () => { cursor = undefined; pages.length = 0; refresh(); });
    form.addEventListener("input", (e) => { if (e.target.type === "text") { cursor = undefined; pages.length = 0; refresh(); } });

    let shown = 0;
    async function refresh() {
      const q = filters();
      history.replaceState(null, "", "/" + (q.toString() ? "?" + q : ""));
      const apiQuery = new URLSearchParams(q);
      if (q.get("since")) apiQuery.set("since", new Date(Date.now() - Number(q.get("since")) * 60000).toISOString());
      if (cursor) apiQuery.set("after", cursor);
      const mine = ++shown;
      try {
        const page = await api("/api/tasks?" + apiQuery);
        if (mine !== shown) return;
        live(true);
        const head = el("tr", {}, ...["task", "status", "tool", "age", "principal", "now", "updated"].map((h) => el("th", {}, h)));
        const rows = page.tasks.map((t) => el("tr", { "data-task-id": t.taskId },
          el("td", { class: "mono" }, el("a", { href: "/task/" + encodeURIComponent(t.taskId) }, t.taskId)),
          el("td", {}, badge(t)), el("td", {}, t.tool), el("td", {}, age(t.ageMs)), el("td", { class: "mono" }, t.principal ?? "-"),
          el("td", { class: "state" }, t.state), el("td", {}, new Date(t.lastUpdatedAt).toLocaleTimeString())));
        table.replaceChildren(head, ...(rows.length > 0 ? rows : [el("tr", {}, el("td", { colSpan: 7, class: "empty" }, "no tasks"))]));
        pager.replaceChildren(
          ...(pages.length > 0 ? [el("button", { type: "button", onclick: () => { cursor = pages.pop(); refresh(); } }, "previous page")] : []),
          ...(page.next ? [el("button", { type: "button", id: "next", onclick: () => { pages.push(cursor); cursor = page.next; refresh(); } }, "next page")] : []),
        );
      } catch (error) {
        live(false);
        table.replaceChildren(el("tr", {}, el("td", { class: "error" }, String(error.message))));
      }
    }
    refresh();
    return setInterval(refresh, 2000);
  }

  // ---- one task ----
  function taskView(id) {
    const message = el("div", { id: "message" });
    const head = el("div", {});
    const body = el("div", {});
    main.replaceChildren(el("p", {}, el("a", { href: "/" }, "← all tasks")), head, message, body);
    const reason = el("input", { type: "text", id: "reason", placeholder: "reason (for fail)" });

    async function act(action) {
      message.className = "";
      message.textContent = action + "…";
      try {
        const done = await api("/api/tasks/" + encodeURIComponent(id) + "/" + action, {
          method: "POST",
          headers: { "content-type": "application/json", "x-dashboard-token": TOKEN },
          body: JSON.stringify(action === "fail" && reason.value.trim() ? { reason: reason.value.trim() } : {}),
        });
        message.textContent = action + ": the task is now " + done.status;
      } catch (error) {
        message.className = "error";
        message.textContent = action + " refused: " + error.message;
      }
      refresh();
    }

    async function refresh() {
      try {
        const t = await api("/api/tasks/" + encodeURIComponent(id));
        live(true);
        const terminal = t.status === "completed" || t.status === "failed" || t.status === "cancelled";
        const buttons = !ACTIONS ? [] : [
          ...(!terminal ? [el("button", { type: "button", "data-action": "cancel", onclick: () => act("cancel") }, "Cancel")] : []),
          ...(held(t) ? [el("button", { type: "button", "data-action": "retry", onclick: () => act("retry") }, "Retry"), reason, el("button", { type: "button", "data-action": "fail", onclick: () => act("fail") }, "Fail")] : []),
        ];
        const fields = [["state", t.state], ["tool", t.tool + (t.version ? " (version " + t.version + ")" : "")], ["created", t.createdAt], ["updated", t.lastUpdatedAt], ["expires", t.expiresAt],
          ["principal", t.principal ?? "none"], ["call", t.callId], ...(t.statusMessage ? [["message", t.statusMessage]] : [])];
        head.replaceChildren(
          el("h1", { class: "mono" }, t.taskId, " ", badge(t)),
          el("dl", { class: "fields" }, ...fields.flatMap(([k, v]) => [el("dt", {}, k), el("dd", { "data-field": k }, v)])),
          el("div", { class: "actions" }, ...buttons),
        );
        const timeline = el("table", { id: "timeline" },
          el("tr", {}, ...["#", "at", "kind", "effect", "value", "took"].map((h) => el("th", {}, h))),
          ...t.timeline.map((e) => el("tr", { "data-kind": e.kind },
            el("td", {}, String(e.index)), el("td", { class: "mono" }, e.at ? e.at.slice(11, 23) : ""), el("td", { class: "kind" }, e.kind),
            el("td", { class: "mono" }, e.effect), el("td", { class: "mono" }, e.value), el("td", {}, e.tookMs !== undefined ? "≈ " + e.tookMs + " ms" : ""))));
        const waiting = Object.entries(t.waitingFor || {});
        body.replaceChildren(
          el("h2", {}, "timeline"), t.timeline.length > 0 ? timeline : el("p", {}, "nothing recorded yet"),
          ...(waiting.length > 0 ? [el("h2", {}, "waiting for"), el("ul", {}, ...waiting.map(([k, m]) => el("li", { class: "mono" }, k + " (" + m + ")")))] : []),
          ...(t.result ? [el("h2", {}, "result"), el("pre", { id: "result" }, JSON.stringify(t.result, null, 2))] : []),
          ...(t.error ? [el("h2", {}, "error"), el("pre", { id: "error" }, JSON.stringify(t.error, null, 2))] : []),
        );
      } catch (error) {
        live(false);
        head.replaceChildren(el("p", { class: "error" }, String(error.message)));
      }
    }
    refresh();
    return setInterval(refresh, 1000);
  }

  const task = /^\\/task\\/(.+)$/.exec(location.pathname);
  if (task) taskView(decodeURIComponent(task[1]));
  else listView();
})();
`;
