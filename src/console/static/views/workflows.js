// Workflow runs (docs/workflows.md): the list, and one run's steps as a timeline, each with its
// status and attempts as the run record holds them, a review's verdict and comments, the cost per
// step, and a sign-off that waits with its Approve / Reject buttons. Read again every two seconds
// while the view is open (runs are files in the state dir, or keys in the fleet's Redis when the
// console has a queue, with no stream of their own); each run says which store keeps it.
import { useEffect, useState } from "/vendor/hooks.mjs";
import { html, money, post, StatusBadge, time } from "../ui.js";

const EVERY_MS = 2_000;
const STORES = { redis: "the fleet's Redis", state_dir: "the state dir" };

function usePolled(path) {
  const [data, setData] = useState(undefined);
  const [error, setError] = useState("");
  const [version, setVersion] = useState(0);
  useEffect(() => {
    let stopped = false;
    const read = () =>
      fetch(path)
        .then((r) => r.json())
        .then(
          (d) => !stopped && (d.error ? setError(d.error) : (setData(d), setError(""))),
          (e) => !stopped && setError(e.message),
        );
    read();
    const timer = setInterval(read, EVERY_MS);
    return () => ((stopped = true), clearInterval(timer));
  }, [path, version]);
  return [data, error, () => setVersion((v) => v + 1)];
}

export function WorkflowsPage({ id }) {
  return id ? html`<${RunPage} id=${id} />` : html`<${RunList} />`;
}

function RunList() {
  const [data, error] = usePolled("/api/workflows");
  const runs = data?.runs ?? [];
  const stores = (data?.stores ?? ["state_dir"]).map((s) => STORES[s] ?? s).join(" and ");
  return html`<h1>Workflow runs</h1>
    ${error ? html`<p class="banner" role="alert">${error}</p>` : ""}
    ${data?.redis_error ? html`<p class="banner" role="alert" data-testid="redis-error">${data.redis_error}</p>` : ""}
    ${
      runs.length === 0
        ? html`<p class="muted">No workflow run in ${stores} (oc_workflow start, or run-workflow).</p>`
        : html`<div class="scroll">
            <table>
              <thead>
                <tr>
                  <th>Run</th>
                  <th>Workflow</th>
                  <th>Status</th>
                  <th>At step</th>
                  <th class="num">Cost</th>
                  <th>Started</th>
                  <th>Kept in</th>
                </tr>
              </thead>
              <tbody>
                ${runs.map(
                  (r) =>
                    html`<tr data-testid="workflow-row" data-run=${r.id}>
                      <td><a href=${`#/workflows/${r.id}`}>${r.id}</a></td>
                      <td>${r.workflow}</td>
                      <td><${StatusBadge} status=${r.status} /></td>
                      <td>${r.step ?? "–"}</td>
                      <td class="num">${money(r.cost)}</td>
                      <td>${time(Date.parse(r.created_at))}</td>
                      <td data-testid="workflow-store">${STORES[r.store] ?? r.store}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }`;
}

const stepCost = (s) => {
  const costs = s.attempts.map((a) => a.cost).filter((c) => typeof c === "number");
  return costs.length ? costs.reduce((a, b) => a + b, 0) : undefined;
};

function SignOff({ run, attempt, onDone }) {
  const [comment, setComment] = useState("");
  const [state, setState] = useState("");
  const send = (decision) => {
    setState("sending…");
    post(`/api/workflows/${run.id}/answer`, { decision, ...(comment.trim() ? { comment } : {}) }).then(
      (r) => (setState(`${decision === "approve" ? "approved" : "rejected"}: the run is ${r.status}`), onDone()),
      (e) => setState(e.message),
    );
  };
  const busy = state === "sending…" || state.startsWith("approved") || state.startsWith("rejected");
  return html`<div class="signoff" data-testid="sign-off">
    <p><strong>Sign-off waits:</strong> <span data-testid="sign-off-asked">${attempt.asked ?? ""}</span></p>
    <label>Comment <input type="text" value=${comment} onInput=${(e) => setComment(e.currentTarget.value)} /></label>
    <button onClick=${() => send("approve")} disabled=${busy}>Approve</button>
    <button class="danger" onClick=${() => send("reject")} disabled=${busy}>Reject</button>
    <span class="small" data-testid="sign-off-state">${state}</span>
  </div>`;
}

function Attempt({ a }) {
  return html`<li data-testid="attempt">
    attempt ${a.n}: <${StatusBadge} status=${a.status} /> ${time(Date.parse(a.startedAt))}${a.endedAt ? ` → ${time(Date.parse(a.endedAt))}` : ""}
    ${typeof a.cost === "number" ? html` · <span data-testid="attempt-cost">${money(a.cost)}</span>` : ""}
    ${(a.turns ?? []).map(
      (t) =>
        html` · session <a href=${`#/task/${t.sessionId}`}>${t.sessionId}</a> <${StatusBadge} status=${t.status} />${
            t.queued ? html` <span class="small" data-testid="turn-worker">on worker ${t.queued.worker ?? "?"}</span>` : ""
          }`,
    )}
    ${a.feedback ? html`<div class="small">sent back with: ${a.feedback}</div>` : ""}
    ${
      a.verdict
        ? html`<div data-testid="verdict">
            review: <strong>${a.verdict.verdict}</strong>
            ${
              a.verdict.comments.length
                ? html`<ul>
                    ${a.verdict.comments.map((c) => html`<li data-testid="review-comment">${c}</li>`)}
                  </ul>`
                : ""
            }
          </div>`
        : ""
    }
    ${(a.checks ?? []).map((c) => html`<div class="small"><code>${c.command}</code> exit ${c.exit ?? "killed"}</div>`)}
    ${a.signOff ? html`<div data-testid="signed-off">${a.signOff.decision} by ${a.signOff.by}${a.signOff.comment ? `: ${a.signOff.comment}` : ""}</div>` : ""}
    ${a.reason && a.status !== "done" ? html`<div class="small">${a.reason}</div>` : ""}
  </li>`;
}

function RunPage({ id }) {
  const [data, error, again] = usePolled(`/api/workflows/${id}`);
  const run = data?.run;
  if (!run)
    return html`<h1>Run ${id}</h1>
      ${error ? html`<p class="banner" role="alert">${error}</p>` : html`<p class="muted">Loading…</p>`}`;
  return html`<h1>${run.workflow.name} <small>${run.id}</small></h1>
    <p>
      <span data-testid="run-status"><${StatusBadge} status=${run.status} /></span> · cost
      <span data-testid="run-cost">${money(data.cost)}</span>${run.end?.reason ? ` · ${run.end.reason}` : ""} · kept in
      <span data-testid="run-store">${STORES[data.store] ?? data.store}</span>
    </p>
    <ol class="steps" data-testid="workflow-timeline">
      ${run.steps.map((s, i) => {
        const last = s.attempts[s.attempts.length - 1];
        const waiting = run.status === "blocked" && i === run.cursor && s.kind === "approval" && last && !last.signOff;
        return html`<li data-testid="workflow-step" data-step=${s.name} data-status=${s.status}>
          <strong>${s.name}</strong> <span class="muted">(${s.kind})</span> <${StatusBadge} status=${s.status} /> · cost
          <span data-testid="step-cost">${money(stepCost(s))}</span>
          <ul>
            ${s.attempts.map((a) => html`<${Attempt} a=${a} />`)}
          </ul>
          ${waiting ? html`<${SignOff} run=${run} attempt=${last} onDone=${again} />` : ""}
        </li>`;
      })}
    </ol>`;
}
