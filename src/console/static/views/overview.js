// The first view: pending approvals (if any), every task with filters, and the timeline.
import { useState } from "/vendor/hooks.mjs";
import { count, elapsed, html, mergeState, money, shortDir, StatusBadge, taskLabel } from "../ui.js";
import { PendingList } from "./pending.js";
import { Timeline } from "./timeline.js";

function Filter({ label, value, options, onChange }) {
  return html`<label
    >${label}
    <select value=${value} onChange=${(e) => onChange(e.currentTarget.value)}>
      <option value="">all</option>
      ${options.map((o) => html`<option value=${o}>${o}</option>`)}
    </select>
  </label>`;
}

export function TaskTable({ tasks, now }) {
  if (tasks.length === 0)
    return html`<p class="muted">No tasks yet. Work started with oc_delegate or oc_delegate_parallel by any MCP server using this state dir shows up here.</p>`;
  return html`<div class="scroll">
    <table class="tasks">
      <thead>
        <tr>
          <th>Status</th>
          <th>Task</th>
          <th>Model</th>
          <th>Agent</th>
          <th>Directory</th>
          <th>Batch</th>
          <th class="num">Elapsed</th>
          <th class="num">Tokens</th>
          <th class="num">Cost</th>
          <th class="num">Files</th>
        </tr>
      </thead>
      <tbody>
        ${tasks.map(
          (t) =>
            html`<tr data-testid="task-row" data-session=${t.id} data-status=${t.status}>
              <td><${StatusBadge} status=${t.status} retry=${t.retry} /></td>
              <td>
                <a href=${`#/task/${t.id}`}>${taskLabel(t)}</a>
                <div class="muted small">${t.id} · pid ${t.pid}</div>
                ${t.worktree?.branch ? html`<div class="small" data-testid="task-branch"><code>${t.worktree.branch}</code> · ${mergeState(t.worktree)}</div>` : ""}
              </td>
              <td>
                ${t.model ?? "default"}${t.fallbacks.length ? html`<div class="small warn">fallback: ${t.fallbacks.map((f) => f.to).join(" → ")}</div>` : ""}
              </td>
              <td>${t.agent ?? "–"}</td>
              <td title=${t.directory}>${shortDir(t.directory)}</td>
              <td>${t.batch_id ? html`<span class="small">${t.batch_id.slice(0, 10)} #${(t.index ?? 0) + 1}</span>` : "–"}</td>
              <td class="num">${elapsed(t, now)}</td>
              <td class="num">${count(t.tokens)}</td>
              <td class="num">${money(t.cost)}</td>
              <td class="num">${t.files.length}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

export function Overview({ tasks, pending, now }) {
  const [status, setStatus] = useState("");
  const [directory, setDirectory] = useState("");
  const [batch, setBatch] = useState("");
  const uniq = (xs) => [...new Set(xs.filter(Boolean))].sort();
  const shown = tasks.filter((t) => (!status || t.status === status) && (!directory || t.directory === directory) && (!batch || t.batch_id === batch));
  return html`
    ${
      pending.length > 0
        ? html`<section aria-labelledby="pending-h">
            <h2 id="pending-h">Waiting for you</h2>
            <${PendingList} pending=${pending} tasks=${Object.fromEntries(tasks.map((t) => [t.id, t]))} compact />
          </section>`
        : ""
    }
    <section aria-labelledby="tasks-h">
      <h2 id="tasks-h">Tasks <span class="muted small">${shown.length} of ${tasks.length}</span></h2>
      <div class="filters">
        <${Filter} label="Status" value=${status} options=${uniq(tasks.map((t) => t.status))} onChange=${setStatus} />
        <${Filter} label="Directory" value=${directory} options=${uniq(tasks.map((t) => t.directory))} onChange=${setDirectory} />
        <${Filter} label="Batch" value=${batch} options=${uniq(tasks.map((t) => t.batch_id))} onChange=${setBatch} />
      </div>
      <${TaskTable} tasks=${shown} now=${now} />
    </section>
    <section aria-labelledby="timeline-h">
      <h2 id="timeline-h">Timeline</h2>
      <${Timeline} tasks=${shown} now=${now} embedded />
    </section>
  `;
}
