// Permission requests and questions across all servers, with the buttons that answer them. The
// answer goes to opencode through the console; the MCP call waiting on it carries on by itself.
import { useState } from "/vendor/hooks.mjs";
import { html, post, taskLabel, time } from "../ui.js";

/** The task a request belongs to: one of the state dir's, or a task of the fleet's queue (a worker's session). */
function where(r, task) {
  if (task) return html`<a href=${`#/task/${task.id}`}>${taskLabel(task)}</a>`;
  if (r.task_id) return html`<a href="#/queue" data-testid="pending-task">queue task ${r.task_id}</a> (${r.sessionId})`;
  return r.sessionId;
}

function Permission({ r, task }) {
  const [message, setMessage] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const send = (decision) => {
    setBusy(true);
    setError("");
    post("/api/answer", { id: r.id, decision, ...(decision === "reject" && message ? { message } : {}) }).catch((e) => (setError(e.message), setBusy(false)));
  };
  const description = typeof r.metadata?.description === "string" ? r.metadata.description : "";
  return html`<article class="request" data-testid="pending" data-request=${r.id}>
    <h3>Permission: <code>${r.permission}</code></h3>
    <p class="muted small">${where(r, task)} · asked ${time(r.asked_at)} · ${r.server}</p>
    <pre class="what">${r.patterns.join("\n") || "(no pattern)"}</pre>
    ${description ? html`<p>${description}</p>` : ""}
    ${r.always.length ? html`<p class="small muted">“Always” also allows from now on: ${r.always.join(", ")}</p>` : ""}
    <div class="actions">
      <button disabled=${busy} onClick=${() => send("once")}>Allow once</button>
      <button disabled=${busy} onClick=${() => send("always")}>Always</button>
      <input
        aria-label="Message to the agent (with reject)"
        placeholder="Message to the agent (optional)"
        value=${message}
        onInput=${(e) => setMessage(e.currentTarget.value)}
      />
      <button class="danger" disabled=${busy} onClick=${() => send("reject")}>Reject</button>
    </div>
    ${error ? html`<p class="error" role="alert">${error}</p>` : ""}
  </article>`;
}

function Question({ r, task }) {
  const [choices, setChoices] = useState(r.questions.map(() => []));
  const [texts, setTexts] = useState(r.questions.map(() => ""));
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const send = (body) => {
    setBusy(true);
    post("/api/answer", { id: r.id, ...body }).catch((e) => (setError(e.message), setBusy(false)));
  };
  const toggle = (i, label, multiple) =>
    setChoices(choices.map((c, j) => (j !== i ? c : multiple ? (c.includes(label) ? c.filter((x) => x !== label) : [...c, label]) : [label])));
  const answers = r.questions.map((_, i) => (texts[i].trim() ? [texts[i].trim()] : choices[i]));
  return html`<article class="request" data-testid="pending" data-request=${r.id}>
    <h3>Question</h3>
    <p class="muted small">${where(r, task)} · asked ${time(r.asked_at)}</p>
    ${r.questions.map(
      (q, i) =>
        html`<fieldset>
          <legend>${q.question}</legend>
          ${q.options.map(
            (o) =>
              html`<label class="option"
                ><input
                  type=${q.multiple ? "checkbox" : "radio"}
                  name=${`${r.id}-${i}`}
                  checked=${choices[i].includes(o.label)}
                  onChange=${() => toggle(i, o.label, q.multiple)}
                />${o.label}${o.description ? html` <span class="muted small">${o.description}</span>` : ""}</label
              >`,
          )}
          <input
            aria-label="Your own answer"
            placeholder="Or your own answer"
            value=${texts[i]}
            onInput=${(e) => setTexts(texts.map((t, j) => (j === i ? e.currentTarget.value : t)))}
          />
        </fieldset>`,
    )}
    <div class="actions">
      <button disabled=${busy || answers.some((a) => a.length === 0)} onClick=${() => send({ answers })}>Answer</button>
      <button class="danger" disabled=${busy} onClick=${() => send({ decision: "reject" })}>Dismiss</button>
    </div>
    ${error ? html`<p class="error" role="alert">${error}</p>` : ""}
  </article>`;
}

export function PendingList({ pending, tasks }) {
  if (pending.length === 0) return html`<p class="muted">Nothing waits for an answer.</p>`;
  return html`<div class="requests">
    ${pending.map((r) => (r.kind === "permission" ? html`<${Permission} key=${r.id} r=${r} task=${tasks[r.sessionId]} />` : html`<${Question} key=${r.id} r=${r} task=${tasks[r.sessionId]} />`))}
  </div>`;
}
