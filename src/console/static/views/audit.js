// The audit trail, newest first, with filters and pages. Each page is read from the trail's end (or
// where the previous page stopped, its `next` cursor): the newest page is read again when the trail
// grows, an older page stays as it is and says how many entries came since.
import { useEffect, useState } from "/vendor/hooks.mjs";
import { html } from "../ui.js";

export function AuditPage({ version }) {
  const [filters, setFilters] = useState({ session: "", tool: "", outcome: "", since: "", until: "" });
  // cursors[n]: where page n starts (page 0: the end of the trail).
  const [cursors, setCursors] = useState([undefined]);
  const [page, setPage] = useState(0);
  const [data, setData] = useState();
  const [error, setError] = useState("");
  const [seen, setSeen] = useState(version);
  const newestVersion = page === 0 ? version : seen;
  useEffect(() => {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(filters)) if (v) q.set(k, k === "since" || k === "until" ? new Date(v).toISOString() : v);
    if (cursors[page]) q.set("before", cursors[page]);
    fetch(`/api/audit?${q}`)
      .then(async (r) => ({ ok: r.ok, body: await r.json() }))
      .then(({ ok, body }) => {
        if (!ok) return setError(body.error);
        setData(body);
        setError("");
        if (body.next) setCursors((c) => [...c.slice(0, page + 1), body.next]);
      });
  }, [newestVersion, page, JSON.stringify(filters)]);
  const go = (n) => {
    if (page === 0) setSeen(version);
    setPage(n);
  };
  const set = (k) => (e) => (setPage(0), setCursors([undefined]), setFilters({ ...filters, [k]: e.currentTarget.value }));
  const newer = page > 0 ? version - seen : 0;
  return html`
    <h2>Audit trail <span class="muted small">newest first</span></h2>
    ${data?.off ? html`<p class="muted">Auditing is off (OPENCODE_CONDUCTOR_AUDIT=off).</p>` : ""}
    <div class="filters">
      <label>Session <input value=${filters.session} onInput=${set("session")} placeholder="ses_…" /></label>
      <label
        >Tool
        <select value=${filters.tool} onChange=${set("tool")}>
          <option value="">all</option>
          ${(data?.tools ?? []).map((t) => html`<option>${t}</option>`)}
        </select></label
      >
      <label
        >Outcome
        <select value=${filters.outcome} onChange=${set("outcome")}>
          <option value="">all</option>
          ${(data?.outcomes ?? []).map((t) => html`<option>${t}</option>`)}
        </select></label
      >
      <label>Since <input type="datetime-local" value=${filters.since} onInput=${set("since")} /></label>
      <label>Until <input type="datetime-local" value=${filters.until} onInput=${set("until")} /></label>
    </div>
    ${error ? html`<p class="error" role="alert">${error}</p>` : ""}
    ${newer > 0 ? html`<p class="muted small">The trail grew since this page was read: <a href="#/audit" onClick=${() => go(0)}>back to the newest</a>.</p>` : ""}
    <div class="scroll">
      <table class="audit">
        <thead>
          <tr>
            <th>Time</th>
            <th>Tool</th>
            <th>Outcome</th>
            <th>Session</th>
            <th>Decision</th>
            <th>By</th>
            <th>Model</th>
            <th>What</th>
          </tr>
        </thead>
        <tbody>
          ${(data?.entries ?? []).map(
            (e) =>
              html`<tr data-testid="audit-row" data-tool=${e.tool} data-by=${e.by ?? ""}>
                <td class="small">${new Date(e.time).toLocaleString("en-GB")}</td>
                <td><code>${e.tool}</code></td>
                <td>${e.outcome}</td>
                <td class="small">${e.session_id ?? "–"}</td>
                <td>${e.decision ?? ""}</td>
                <td>${e.by ?? ""}</td>
                <td class="small">${e.model ?? ""}</td>
                <td class="small">
                  ${e.prompt?.first_line ?? ""}${e.error ? html`<div class="error">${e.error}</div>` : ""}${e.detail ? html`<div class="muted">${JSON.stringify(e.detail).slice(0, 160)}</div>` : ""}
                </td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
    ${
      data?.next && data.entries.length < data.size && data.reached
        ? html`<p class="muted small">This page read the trail back to ${new Date(data.reached).toLocaleString("en-GB")}; older entries may match.</p>`
        : ""
    }
    <nav class="pager" aria-label="Audit pages">
      <button disabled=${page === 0} onClick=${() => go(page - 1)}>← newer</button>
      <span>page ${page + 1}</span>
      <button disabled=${!data?.next} onClick=${() => go(page + 1)}>older →</button>
    </nav>
  `;
}
