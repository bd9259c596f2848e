// The fleet's queue (with OPENCODE_CONDUCTOR_QUEUE): the workers with their load and the provider
// slots, then every task with its state, worker and attempts, and a Cancel button for the ones not
// finished. Read again every two seconds while the view is open (the queue has no stream of its own
// for the page).
import { useEffect, useState } from "/vendor/hooks.mjs";
import { html, post, StatusBadge, time } from "../ui.js";

const EVERY_MS = 2_000;

function CancelButton({ id, onDone }) {
  const [state, setState] = useState("");
  const cancel = () => {
    setState("cancelling…");
    post("/api/queue/cancel", { id }).then(
      (r) => (setState(`cancelled: ${r.status}`), onDone()),
      (e) => setState(e.message),
    );
  };
  return html`<button class="danger" onClick=${cancel} disabled=${state === "cancelling…" || state.startsWith("cancelled")}>Cancel</button>
    <span class="small" data-testid="cancel-state">${state}</span>`;
}

function attemptLine(a) {
  const how = a.reattached_to ? `re-attached to attempt ${a.reattached_to}` : a.rerun ? `ran again: ${a.rerun}` : "";
  return `${a.n} ${a.outcome} on ${a.worker}${a.sessionId ? ` (${a.sessionId})` : ""}${how ? ` · ${how}` : ""}`;
}

function Workers({ workers, slots }) {
  return html`<h2>Workers</h2>
    ${
      workers.length === 0
        ? html`<p class="muted">No worker is running.</p>`
        : html`<div class="scroll">
            <table class="workers">
              <thead>
                <tr>
                  <th>Worker</th>
                  <th>Host</th>
                  <th class="num">Running</th>
                  <th>Roots</th>
                  <th>opencode</th>
                  <th>Heartbeat</th>
                </tr>
              </thead>
              <tbody>
                ${workers.map(
                  (w) =>
                    html`<tr data-testid="worker-row" data-worker=${w.id}>
                      <td>${w.id}</td>
                      <td>${w.host}</td>
                      <td class="num" data-testid="worker-load">${w.running}/${w.concurrency}</td>
                      <td>${w.roots.join(", ") || "–"}</td>
                      <td><code>${w.opencode}</code></td>
                      <td>${time(Date.parse(w.heartbeat))}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
    ${
      Object.keys(slots).length
        ? html`<p data-testid="slots">
            Provider slots: ${Object.entries(slots).map(([p, s]) => html`<span class="slot" data-provider=${p}> ${p} ${s.running}/${s.limit ?? "∞"}</span>`)}
          </p>`
        : ""
    }`;
}

export function QueuePage() {
  const [data, setData] = useState(undefined);
  const [error, setError] = useState("");
  const load = () =>
    fetch("/api/queue")
      .then((r) => r.json())
      .then(
        (d) => (setData(d), setError("")),
        (e) => setError(e.message),
      );
  useEffect(() => {
    void load();
    const timer = setInterval(load, EVERY_MS);
    return () => clearInterval(timer);
  }, []);
  if (error) return html`<p class="error" role="alert">${error}</p>`;
  if (!data) return html`<p class="muted">Reading the queue…</p>`;
  if (data.off) return html`<p class="muted">No queue: start the console with OPENCODE_CONDUCTOR_QUEUE=redis://… to see the fleet.</p>`;
  const c = data.counts;
  return html`<p data-testid="queue-counts">
      Queue <code>${data.url}</code>: ${c.waiting} waiting, ${c.delayed} delayed, ${c.active} running, ${c.completed} finished, ${c.failed} failed
    </p>
    <${Workers} workers=${data.workers} slots=${data.slots ?? {}} />
    <h2>Tasks</h2>
    <div class="scroll">
      <table class="queue">
        <thead>
          <tr>
            <th>State</th>
            <th>Task</th>
            <th>Worker</th>
            <th>Attempts</th>
            <th>Queued</th>
            <th></th>
          </tr>
        </thead>
        <tbody>
          ${data.tasks.map(
            (t) =>
              html`<tr data-testid="queue-row" data-task=${t.id} data-state=${t.state}>
                <td>${t.state}${t.status ? html` <${StatusBadge} status=${t.status} />` : ""}</td>
                <td>
                  ${t.title}
                  <div class="muted small">${t.id} · ${t.queue}${t.session_id ? ` · ${t.session_id}` : ""}</div>
                </td>
                <td data-testid="queue-worker">${t.worker ?? "–"}</td>
                <td class="small" data-testid="queue-attempts">${t.attempts.length ? t.attempts.map((a) => html`<div>${attemptLine(a)}</div>`) : "–"}</td>
                <td>${time(t.enqueued_at)}</td>
                <td>${t.state === "queued" || t.state === "running" ? html`<${CancelButton} id=${t.id} onDone=${load} />` : ""}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>`;
}
