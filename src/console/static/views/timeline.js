// Parallel work on a time axis with Chart.js (window.Chart, from its UMD build): one row per task,
// floating bars per state (a finished task's working time takes its final status's colour), and
// markers where an approval was asked or a fallback switched models. Below: tokens and cost per model.
import { useEffect, useRef } from "/vendor/hooks.mjs";
import { html, STATUS_COLORS, taskLabel } from "../ui.js";

const FINAL = ["done", "error", "lost", "interrupted", "checks_failed", "budget_exceeded"];

function label(t) {
  const text = taskLabel(t);
  return text.length > 28 ? `${text.slice(0, 27)}…` : text;
}

function timelineData(tasks, now) {
  const t0 = Math.min(...tasks.map((t) => t.started_at));
  const sec = (ms) => (ms - t0) / 1000;
  const labels = tasks.map((t, i) => `${i + 1}. ${label(t)}`);
  const states = ["running", "retry", "blocked", ...FINAL];
  const bars = states.map((state) => ({
    type: "bar",
    label: state,
    grouped: false,
    order: 1, // drawn first: the markers stay on top
    backgroundColor: STATUS_COLORS[state],
    barPercentage: 0.7,
    data: tasks.flatMap((t, i) =>
      t.segments
        .map((s) => ({ ...s, shown: s.state === "running" && FINAL.includes(t.status) ? t.status : s.state }))
        .filter((s) => s.shown === state)
        .map((s) => ({ y: labels[i], x: [sec(s.from), sec(s.to ?? t.ended_at ?? now)], task: t.id })),
    ),
  }));
  const marks = (name, style, color, times) => ({
    type: "scatter",
    label: name,
    order: 0,
    pointStyle: style,
    pointRadius: 7,
    backgroundColor: color,
    borderColor: "#222",
    data: tasks.flatMap((t, i) => times(t).map((at) => ({ x: sec(at), y: labels[i] }))),
  });
  return {
    labels,
    datasets: [
      ...bars.filter((d) => d.data.length > 0),
      marks("approval asked", "triangle", "#ffd23f", (t) => t.approvals),
      marks("fallback", "rectRot", "#ffffff", (t) => t.fallbacks.map((f) => Date.parse(f.at))),
    ],
  };
}

function useChart(ref, config) {
  const chart = useRef();
  useEffect(() => {
    if (!ref.current || !window.Chart) return;
    if (!chart.current) chart.current = new window.Chart(ref.current, config);
    else {
      chart.current.data = config.data;
      chart.current.update("none");
    }
  });
  useEffect(() => () => chart.current?.destroy(), []);
}

function TaskBars({ tasks, now }) {
  const ref = useRef();
  useChart(ref, {
    type: "bar",
    data: timelineData(tasks, now),
    options: {
      indexAxis: "y",
      animation: false,
      maintainAspectRatio: false,
      parsing: { xAxisKey: "x", yAxisKey: "y" },
      scales: {
        x: { type: "linear", min: 0, title: { display: true, text: "seconds since the first task started" } },
        y: { type: "category" },
      },
      plugins: { legend: { position: "bottom" } },
    },
  });
  const height = 70 + tasks.length * 34;
  return html`<div class="chart" style=${{ height: `${height}px` }}>
    <canvas ref=${ref} data-testid="timeline" role="img" aria-label=${`Timeline of ${tasks.length} tasks`}></canvas>
  </div>`;
}

function ModelBars({ tasks }) {
  const ref = useRef();
  const byModel = {};
  for (const t of tasks) {
    const m = (byModel[t.model ?? "default"] ??= { tokens: 0, cost: 0 });
    m.tokens += t.tokens ?? 0;
    m.cost += t.cost ?? 0;
  }
  const models = Object.keys(byModel).sort();
  useChart(ref, {
    type: "bar",
    data: {
      labels: models,
      datasets: [
        { label: "tokens", data: models.map((m) => byModel[m].tokens), backgroundColor: "#2f6fdb", yAxisID: "tokens" },
        { label: "cost ($)", data: models.map((m) => byModel[m].cost), backgroundColor: "#2e8b57", yAxisID: "cost" },
      ],
    },
    options: {
      animation: false,
      maintainAspectRatio: false,
      scales: { tokens: { position: "left", beginAtZero: true }, cost: { position: "right", beginAtZero: true, grid: { drawOnChartArea: false } } },
    },
  });
  return html`<div class="chart small-chart"><canvas ref=${ref} data-testid="models-chart" role="img" aria-label="Tokens and cost per model"></canvas></div>`;
}

export function Timeline({ tasks, now, embedded }) {
  if (tasks.length === 0) return html`<p class="muted">Nothing to draw yet.</p>`;
  return html`
    ${embedded ? "" : html`<h2>Timeline</h2>`}
    <${TaskBars} tasks=${tasks} now=${now} />
    ${
      embedded
        ? ""
        : html`<h2>Tokens and cost per model</h2>
            <${ModelBars} tasks=${tasks} />`
    }
  `;
}
