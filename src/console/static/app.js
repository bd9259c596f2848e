// The console page: one live stream (/api/events) feeds the state; the hash picks the view.
import { render } from "/vendor/preact.mjs";
import { useEffect, useReducer, useState } from "/vendor/hooks.mjs";
import { html } from "./ui.js";
import { Overview } from "./views/overview.js";
import { TaskPage } from "./views/task.js";
import { AuditPage } from "./views/audit.js";
import { ServersPage } from "./views/servers.js";
import { QueuePage } from "./views/queue.js";
import { PendingList } from "./views/pending.js";
import { Timeline } from "./views/timeline.js";
import { WorkflowsPage } from "./views/workflows.js";

const initial = { tasks: {}, pending: [], servers: [], health: [], connected: false, auditVersion: 0, parts: [] };

function reduce(state, action) {
  switch (action.type) {
    case "snapshot":
      return {
        ...state,
        connected: true,
        tasks: Object.fromEntries(action.data.tasks.map((t) => [t.id, t])),
        pending: action.data.pending,
        servers: action.data.servers,
        health: action.data.health ?? [],
      };
    case "task":
      return { ...state, tasks: { ...state.tasks, [action.data.id]: action.data } };
    case "pending":
      return { ...state, pending: action.data };
    case "servers":
      return { ...state, servers: action.data };
    case "health":
      return { ...state, health: action.data };
    case "audit":
      return { ...state, auditVersion: state.auditVersion + 1 };
    case "part":
      // Only the last few hundred, for the open task page to pick up.
      return { ...state, parts: [...state.parts.slice(-500), action.data] };
    case "down":
      return { ...state, connected: false };
    default:
      return state;
  }
}

function useRoute() {
  const [hash, setHash] = useState(location.hash || "#/");
  useEffect(() => {
    const on = () => setHash(location.hash || "#/");
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return hash.slice(1).split("/").filter(Boolean);
}

function useLive() {
  const [state, dispatch] = useReducer(reduce, initial);
  useEffect(() => {
    const source = new EventSource("/api/events");
    for (const type of ["snapshot", "task", "pending", "servers", "health", "audit", "part"]) {
      source.addEventListener(type, (e) => dispatch({ type, data: JSON.parse(e.data) }));
    }
    source.onerror = () => dispatch({ type: "down" });
    return () => source.close();
  }, []);
  return state;
}

/** A clock for elapsed times and running bars: drawn locally, nothing is fetched. */
function useNow() {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  return now;
}

const NAV = [
  ["", "Tasks"],
  ["approvals", "Approvals"],
  ["timeline", "Timeline"],
  ["workflows", "Workflows"],
  ["audit", "Audit"],
  ["queue", "Queue"],
  ["servers", "Servers"],
];

function App() {
  const state = useLive();
  const route = useRoute();
  const now = useNow();
  const tasks = Object.values(state.tasks).sort((a, b) => a.started_at - b.started_at || (a.index ?? 0) - (b.index ?? 0));
  const page = route[0] ?? "";
  let body;
  if (page === "task") body = html`<${TaskPage} id=${route[1]} task=${state.tasks[route[1]]} parts=${state.parts} pending=${state.pending} now=${now} />`;
  else if (page === "approvals") body = html`<${PendingList} pending=${state.pending} tasks=${state.tasks} />`;
  else if (page === "timeline") body = html`<${Timeline} tasks=${tasks} now=${now} />`;
  else if (page === "workflows") body = html`<${WorkflowsPage} id=${route[1]} />`;
  else if (page === "audit") body = html`<${AuditPage} version=${state.auditVersion} />`;
  else if (page === "servers") body = html`<${ServersPage} servers=${state.servers} />`;
  else if (page === "queue") body = html`<${QueuePage} />`;
  else body = html`<${Overview} tasks=${tasks} pending=${state.pending} now=${now} />`;
  return html`
    <header>
      <a class="brand" href="#/">opencode-conductor</a>
      <nav aria-label="Views">
        ${NAV.map(
          ([key, label]) =>
            html`<a href=${`#/${key}`} aria-current=${page === key ? "page" : undefined}
              >${label}${key === "approvals" && state.pending.length ? html` <span class="count" data-testid="pending-count">${state.pending.length}</span>` : ""}</a
            >`,
        )}
      </nav>
      <span class=${`live ${state.connected ? "on" : "off"}`} role="status">${state.connected ? "live" : "reconnecting…"}</span>
    </header>
    ${state.health
      .filter((h) => !h.writable)
      .map(
        (h) =>
          html`<p class="banner" role="alert" data-testid="unwritable">
            <strong>Not written:</strong> ${h.text}.
            ${
              h.name === "audit trail"
                ? "MCP servers keep the lines they cannot write in memory and write them once it can be; with OPENCODE_CONDUCTOR_AUDIT_REQUIRED=1 they refuse work that can change files meanwhile."
                : "Tasks started meanwhile show here once it can be written again (their lines are kept until then)."
            }
          </p>`,
      )}
    <main>${body}</main>
  `;
}

const root = document.getElementById("root");
root.textContent = ""; // the "Loading" line: render() adds to what is there
render(html`<${App} />`, root);
