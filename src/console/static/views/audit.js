// The audit trail, newest first, with filters and pages; read again when the trail grows.
import { useEffect, useState } from "/vendor/hooks.mjs";
import { html } from "../ui.js";

export function AuditPage({ version }) {
  const [filters, setFilters] = useState({ session: "", tool: "", outcome: "", since: "", until: "" });
  const [page, setPage] = useState(0);
  const [data, setData] = useState();
  const [error, setError] = useState("");
  useEffect(() => {
    const q = new URLSearchParams({ page: String(page) });
    for (const [k, v] of Object.entries(filters)) if (v) q.set(k, k === "since" || k === "until" ? new Date(v).toISOString() : v);
    fetch(`/api/audit?${q}`)
      .then(async (r) => ({ ok: r.ok, body: await r.json() }))
      .then(({ ok, body }) => (ok ? (setData(body), setError("")) : setError(body.error)));
  }, [version, page, JSON.stringify(filters)]);
  const set = (k) => (e) => (setPage(0), setFilters({ ...filters, [k]: e.currentTarget.value }));
  return html`
    <h2>Audit trail ${data ? html`<span class="muted small">${data.total} entries</span>` : ""}</h2>
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
    <nav class="pager" aria-label="Audit pages">
      <button disabled=${!data || page === 0} onClick=${() => setPage(page - 1)}>← newer</button>
      <span>page ${data ? data.page + 1 : 1} of ${data?.pages ?? 1}</span>
      <button disabled=${!data || page + 1 >= data.pages} onClick=${() => setPage(page + 1)}>older →</button>
    </nav>
  `;
}
