// Shared bits of the page: the html tag (htm over Preact: every value is rendered as text, never as
// markup), formatting, and the one POST helper.
import { h } from "/vendor/preact.mjs";
import htm from "/vendor/htm.mjs";

export const html = htm.bind(h);

export const STATUS_COLORS = {
  running: "#2f6fdb",
  retry: "#d99a00",
  blocked: "#b4489c",
  done: "#2e8b57",
  error: "#cc3333",
  lost: "#777777",
  unreachable: "#6a5acd",
  interrupted: "#8a8a8a",
  checks_failed: "#d9622b",
  budget_exceeded: "#a0522d",
};

export function StatusBadge({ status, retry }) {
  const label = status === "running" && retry ? `retry ${retry.attempt}` : status;
  return html`<span class="badge" data-status=${status} style=${{ background: STATUS_COLORS[retry && status === "running" ? "retry" : status] ?? "#555" }}
    >${label}</span
  >`;
}

export function elapsed(task, now) {
  const ms = (task.ended_at ?? now) - task.started_at;
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 60 ? `${s}s` : s < 3600 ? `${Math.floor(s / 60)}m ${s % 60}s` : `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

export const money = (n) => (typeof n === "number" ? `$${n.toFixed(4)}` : "–");
export const count = (n) => (typeof n === "number" ? n.toLocaleString("en") : "–");
export const time = (ms) => new Date(ms).toLocaleTimeString("en-GB");
export const shortDir = (d) => (d ? d.split("/").filter(Boolean).slice(-2).join("/") : "–");
export const taskLabel = (t) => t.title || t.task || t.id;

/** A state-changing request: same origin, so the browser sends our cookie and Origin. */
export async function post(path, body) {
  const res = await fetch(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(data.error ?? `HTTP ${res.status}`);
  return data;
}

/** A worktree task's merge state in words: not merged, merged into X, or a conflict and its files. */
export function mergeState(w) {
  if (!w.merge) return w.state === "finished" ? (w.branch ? "not merged" : "nothing to merge (no change)") : "–";
  const m = w.merge;
  if (m.result === "conflict") return `conflict merging into ${m.into}: ${(m.files ?? []).join(", ")}${m.with?.length ? ` (with ${m.with.join(", ")})` : ""}`;
  if (m.result === "missing") return `branch gone (merge into ${m.into} not possible)`;
  return `${m.result === "already" ? "already in" : "merged into"} ${m.into}${m.commit ? ` at ${m.commit.slice(0, 12)}` : ""}`;
}
