// One task: what it is, its transcript as it streams (text, reasoning folded, tool calls with input
// and output), the diff of each changed file, checks and budget; for a worktree task its branch,
// base and merge state, and the diff of its branch. Agent text is rendered as text.
import { useEffect, useState } from "/vendor/hooks.mjs";
import { count, elapsed, html, mergeState, money, StatusBadge, taskLabel } from "../ui.js";
import { PendingList } from "./pending.js";

function applyParts(transcript, parts, id, since) {
  let out = transcript;
  for (const p of parts.slice(since)) {
    if (p.sessionId !== id) continue;
    if (p.part) {
      const at = out.findIndex((x) => x.id === p.part.id);
      // A part already shown keeps its role; a new one says it when the console knows (2.x prompts), else it is the agent's.
      const role = at >= 0 ? out[at].role : (p.part.role ?? "assistant");
      out = at >= 0 ? out.map((x, i) => (i === at ? { ...p.part, role } : x)) : [...out, { ...p.part, role }];
    } else if (p.delta && p.delta.field === "text") {
      const at = out.findIndex((x) => x.id === p.delta.partID);
      if (at >= 0) out = out.map((x, i) => (i === at ? { ...x, text: (x.text ?? "") + p.delta.delta } : x));
    }
  }
  return out;
}

function Part({ p }) {
  if (p.type === "reasoning")
    return html`<details class="part reasoning">
      <summary>reasoning</summary>
      <pre>${p.text}</pre>
    </details>`;
  if (p.type === "text")
    return html`<div class=${`part text ${p.role}`} data-testid="part-text">
      <span class="who">${p.role === "user" ? "task" : "agent"}</span>
      <pre>${p.text}</pre>
    </div>`;
  return html`<details class="part tool" open=${p.status === "error"} data-testid="part-tool">
    <summary><code>${p.tool}</code> <span class=${`small tool-${p.status}`}>${p.status}</span> ${p.title ?? ""}</summary>
    <div class="small muted">input</div>
    <pre>${JSON.stringify(p.input ?? {}, null, 2)}</pre>
    ${
      p.output !== undefined
        ? html`<div class="small muted">output</div>
            <pre>${p.output}</pre>`
        : ""
    }
    ${
      p.error
        ? html`<div class="small muted">error</div>
            <pre class="error">${p.error}</pre>`
        : ""
    }
  </details>`;
}

function Worktree({ w }) {
  return html`<h3>Worktree</h3>
    <dl class="facts" data-testid="worktree" data-state=${w.state} data-branch=${w.branch ?? ""}>
      <dt>Branch</dt>
      <dd>
        ${w.branch ? html`<code>${w.branch}</code>` : w.state === "finished" ? html`<span class="muted">none (nothing changed)</span>` : html`<span class="muted">made when the task ends</span>`}
      </dd>
      <dt>Base · head</dt>
      <dd><code>${w.base.slice(0, 12)}</code>${w.head ? html` → <code>${w.head.slice(0, 12)}</code>` : ""}</dd>
      <dt>Checkout</dt>
      <dd>
        ${w.checkout_removed ? html`<span class="muted">removed after its time (the branch stays)</span>` : html`<code>${w.path}</code>`} · CONDUCTOR_PORT
        ${w.port}
      </dd>
      <dt>Merge</dt>
      <dd data-testid="merge-state">${mergeState(w)}</dd>
    </dl>`;
}

function Diff({ file }) {
  const lines = (file.patch ?? "").split("\n");
  return html`<details class="diff" open data-testid="diff" data-file=${file.file}>
    <summary>
      <code>${file.file}</code>
      <span class="small"><span class="add">+${file.additions}</span> <span class="del">−${file.deletions}</span> ${file.status ?? ""}</span>
    </summary>
    <pre>
${lines.map((l) => html`<span class=${l.startsWith("+") && !l.startsWith("+++") ? "add" : l.startsWith("-") && !l.startsWith("---") ? "del" : l.startsWith("@@") ? "hunk" : ""}>${l} </span>`)}</pre>
  </details>`;
}

export function TaskPage({ id, task, parts, pending, now }) {
  const [detail, setDetail] = useState();
  const [since, setSince] = useState(0);
  const ended = task?.ended_at;
  useEffect(() => {
    let gone = false;
    const mark = parts.length;
    fetch(`/api/tasks/${encodeURIComponent(id)}`)
      .then((r) => r.json())
      .then((d) => gone || (setDetail(d), setSince(mark)));
    return () => (gone = true);
    // Read again when the task ends: the diff exists only then (a worktree task's once its work is committed).
  }, [id, ended, task?.files.length, task?.worktree?.head]);
  if (!task) return html`<p class="muted">No task ${id} (yet).</p>`;
  const transcript = applyParts(detail?.transcript ?? [], parts, id, since);
  const mine = pending.filter((r) => r.sessionId === id);
  return html`
    <p><a href="#/">← all tasks</a></p>
    <h2>${taskLabel(task)} <${StatusBadge} status=${task.status} retry=${task.retry} /></h2>
    <dl class="facts">
      <dt>Session</dt>
      <dd>${task.id}</dd>
      <dt>Server</dt>
      <dd>${task.server}</dd>
      <dt>Directory</dt>
      <dd>${task.directory ?? "–"}</dd>
      <dt>Model</dt>
      <dd>
        ${task.model ?? "default"}${task.fallbacks_configured.length ? html` <span class="muted small">(fallbacks: ${task.fallbacks_configured.join(", ")})</span>` : ""}
      </dd>
      ${
        task.fallbacks.length
          ? html`<dt>Fallbacks taken</dt>
              <dd>${task.fallbacks.map((f) => html`<div>${f.from} → ${f.to}: ${f.reason}</div>`)}</dd>`
          : ""
      }
      <dt>Agent</dt>
      <dd>${task.agent ?? "–"}</dd>
      <dt>Started by</dt>
      <dd>${task.tool} (MCP server pid ${task.pid})${task.batch_id ? ` · batch ${task.batch_id} #${(task.index ?? 0) + 1}` : ""}</dd>
      <dt>Elapsed</dt>
      <dd>${elapsed(task, now)}</dd>
      <dt>Tokens · cost</dt>
      <dd>${count(task.tokens)} · ${money(task.cost)}</dd>
      ${
        task.budget
          ? html`<dt>Budget</dt>
              <dd>
                ${task.budget.max_tokens !== undefined ? `${count(task.tokens ?? 0)} of ${count(task.budget.max_tokens)} tokens ` : ""}${task.budget.max_cost_usd !== undefined ? `${money(task.cost ?? 0)} of ${money(task.budget.max_cost_usd)}` : ""}
              </dd>`
          : ""
      }
      ${
        task.error
          ? html`<dt>Error</dt>
              <dd class="error">${task.error}</dd>`
          : ""
      }
    </dl>
    ${
      mine.length
        ? html`<h3>Waiting for you</h3>
            <${PendingList} pending=${mine} tasks=${{ [id]: task }} />`
        : ""
    }
    ${
      task.checks_configured.length
        ? html`<h3>Checks</h3>
            <ul class="checks">
              ${(task.checks ?? task.checks_configured.map((command) => ({ command }))).map(
                (c) =>
                  html`<li>
                    <code>${c.command}</code>
                    ${c.passed === undefined ? html`<span class="muted">not run yet</span>` : c.passed ? html`<span class="add">passed</span>` : html`<span class="del">failed (exit ${c.exit})</span>`}${c.round ? html` <span class="muted small">round ${c.round}</span>` : ""}
                  </li>`,
              )}
            </ul>`
        : ""
    }
    ${task.worktree ? html`<${Worktree} w=${task.worktree} />` : ""}
    <h3>Files changed <span class="muted small">${task.worktree && detail?.diff ? detail.diff.length : task.files.length}</span></h3>
    ${
      task.files.length === 0 && !(task.worktree && detail?.diff?.length)
        ? html`<p class="muted">None.</p>`
        : (detail?.diff ?? []).length
          ? detail.diff.map((f) => html`<${Diff} file=${f} />`)
          : html`<ul>
              ${task.files.map((f) => html`<li><code>${f}</code></li>`)}
            </ul>`
    }
    <h3>Transcript</h3>
    ${detail?.error ? html`<p class="error">${detail.error}</p>` : ""}
    <div class="transcript" data-testid="transcript">${transcript.map((p) => html`<${Part} key=${p.id} p=${p} />`)}</div>
  `;
}
