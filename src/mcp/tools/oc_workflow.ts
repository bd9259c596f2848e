// oc_workflow: a team's process as a workflow file (docs/workflows.md), run by the conductor.
// list the project's workflows and the runs; start one (refused before anything runs when the file
// or its inputs are wrong); status, resume (after a crash: at the unfinished step, re-attached to a
// session still running), cancel, retry a failed step; answer a sign-off. A sign-off is asked of
// the user through MCP elicitation when the client can; otherwise the answer says BLOCKED and the
// run waits: nothing signs off by itself.
import { z } from "zod";
import { UsageError } from "../../core/errors.js";
import type { WorkflowsApi } from "../../core/workflows/api.js";
import { lastAttempt, runCost, type WorkflowRun } from "../../core/workflows/run-record.js";
import { defineTool, type ToolContext } from "../tool-def.js";

const WAITS = ["start", "resume", "answer", "retry"];
const NO_DIRECTORY =
  "Workflow files: not listed, no project directory: give `directory` (or start the MCP server with OPENCODE_CONDUCTOR_DIRECTORY) to list its .opencode/workflows/.";

export const ocWorkflow = defineTool({
  name: "oc_workflow",
  title: "Workflows",
  description:
    "Run a workflow file (.opencode/workflows/*.yaml: agent, check, review, approval, deliver steps). list; start {workflow|text, inputs}; status/resume/cancel/retry {run}; answer {run, approve} a sign-off. Waits up to timeout_s, then the run goes on.",
  toolset: "workflows",
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  audit: { when: (a) => a.action !== "list" && a.action !== "status", changesFiles: (a) => a.action !== "cancel" },
  guide: ["oc_workflow runs a workflow file step by step; a BLOCKED answer is a sign-off for a person: ask them, then oc_workflow answer."],
  input: {
    action: z.enum(["list", "start", "status", "resume", "cancel", "retry", "answer"]),
    workflow: z.string().optional().describe("name in .opencode/workflows, or a path"),
    text: z
      .string()
      .max(256 * 1024)
      .optional()
      .describe("the workflow inline (YAML/JSON)"),
    inputs: z.record(z.string(), z.union([z.string(), z.array(z.string())])).optional(),
    run: z.string().optional(),
    approve: z.boolean().optional(),
    comment: z.string().max(4000).optional(),
    directory: z.string().optional(),
    detach: z.boolean().optional().describe("start: a worker of the fleet's queue walks the run, not this server"),
    timeout_s: z.number().min(0).max(3600).optional().describe("default 60"),
  },
  output: { run: z.looseObject({ id: z.string(), status: z.string() }).optional(), runs: z.array(z.looseObject({})).optional() },
  async run(args, ctx) {
    const conductor = await ctx.conductor();
    // Loaded here, not with the server: the workflow runner is nothing a start needs.
    const { workflowsApi } = await import("../../core/workflows/api.js");
    const api = workflowsApi(conductor, { audit: ctx.config.auditPath ?? false });
    if (args.action === "list") {
      // The runs are the state dir's (or the fleet's Redis): they need no project. The workflow
      // files do; without a directory the runs are listed and the answer says what the files need.
      const directory = args.directory ?? conductor.engine.directory;
      const [workflows, runs] = await Promise.all([directory ? api.list(directory) : [], api.runs(20)]);
      const lines = [
        ...(directory ? [] : [NO_DIRECTORY]),
        ...workflows.map((w) =>
          w.workflow ? `${w.name}: ${w.workflow.steps.map((s) => `${s.name}(${s.kind})`).join(" → ")}` : `${w.name}: refused: ${w.error}`,
        ),
        ...runs.map(runLine),
      ];
      if (!directory && runs.length === 0) lines.push("No runs.");
      return {
        text: lines.join("\n") || "No workflows in .opencode/workflows/ and no runs.",
        data: { workflows: workflows.map((w) => ({ name: w.name, path: w.path, ...(w.error ? { error: w.error } : {}) })), runs: runs.map(brief) },
      };
    }
    let run: WorkflowRun;
    if (args.action === "start")
      run = await api.start({ workflow: args.workflow, text: args.text, inputs: args.inputs, directory: args.directory, detach: args.detach });
    else {
      const id = need(args.run, args.action);
      if (args.action === "status") run = await api.get(id);
      else if (args.action === "resume") run = await api.resume(id);
      else if (args.action === "retry") run = await api.retry(id);
      else if (args.action === "cancel") run = await api.cancel(id);
      else {
        if (args.approve === undefined) throw new UsageError('action "answer" needs `approve`: true or false.');
        run = await api.answer(id, { approve: args.approve, comment: args.comment, by: "model" });
      }
    }
    if (WAITS.includes(args.action)) run = await waitAndAsk(api, run, args.timeout_s ?? 60, ctx);
    return { text: describe(run), data: { run: shape(run) } };
  },
});

function need(run: string | undefined, action: string): string {
  if (!run) throw new UsageError(`action "${action}" needs \`run\`: a run id (wfr_…) from start or list.`);
  return run;
}

/** Waits for the run to stop; a sign-off is asked of the user when the client can show a form. */
async function waitAndAsk(api: WorkflowsApi, run: WorkflowRun, timeoutS: number, ctx: ToolContext): Promise<WorkflowRun> {
  const until = Date.now() + timeoutS * 1000;
  for (;;) {
    run = await api.wait(run.id, { timeoutMs: Math.max(0, until - Date.now()), signal: ctx.signal });
    const asked = signOffAsked(run);
    if (asked === undefined || !ctx.canElicit?.() || !ctx.elicit) return run;
    ctx.progress(`asking the user to sign off: ${asked.slice(0, 200)}`);
    const result = await ctx
      .elicit(
        {
          mode: "form",
          message: `Workflow "${run.workflow.name}" (run ${run.id}) asks for your sign-off:\n${asked}\n\n${progressLines(run)}`,
          requestedSchema: {
            type: "object",
            properties: { approve: { type: "boolean", title: "Approve" }, comment: { type: "string", title: "Comment" } },
            required: ["approve"],
          },
        },
        { signal: ctx.signal, timeoutMs: Math.max(1_000, until - Date.now()) },
      )
      .catch(() => undefined);
    // No person answered (a form the client dismissed at once, an error): the run keeps waiting.
    if (!result || result.action !== "accept") return run;
    const content = result.content ?? {};
    run = await api.answer(run.id, {
      approve: content.approve === true,
      comment: typeof content.comment === "string" ? content.comment : undefined,
      by: "human",
    });
  }
}

function signOffAsked(run: WorkflowRun): string | undefined {
  if (run.status !== "blocked") return undefined;
  const step = run.steps[run.cursor];
  const last = step && lastAttempt(step);
  return step?.kind === "approval" && last && !last.signOff ? (last.asked ?? "") : undefined;
}

function runLine(run: WorkflowRun): string {
  const cost = runCost(run);
  return `${run.id} ${run.workflow.name}: ${run.status}${run.end?.reason ? ` (${run.end.reason})` : ""}, at ${run.workflow.steps[run.cursor]?.name ?? "the end"}${cost !== undefined ? `, $${cost.toFixed(4)}` : ""}`;
}

function progressLines(run: WorkflowRun): string {
  return run.steps
    .map((s) => {
      const a = lastAttempt(s);
      const extra = a?.verdict
        ? ` ${a.verdict.verdict}${a.verdict.comments.length ? `: ${a.verdict.comments.join("; ")}` : ""}`
        : a?.reason
          ? ` (${a.reason})`
          : "";
      return `${s.name} (${s.kind}): ${s.status}${s.attempts.length > 1 ? `, ${s.attempts.length} attempts` : ""}${extra}`;
    })
    .join("\n");
}

function describe(run: WorkflowRun): string {
  const head = runLine(run);
  const asked = signOffAsked(run);
  const next =
    asked !== undefined
      ? `\nBLOCKED: a person must sign off: ${asked}\nAsk them; then oc_workflow {"action":"answer","run":"${run.id}","approve":true|false}. Nothing signs off by itself.`
      : run.status === "blocked"
        ? `\nBLOCKED: ${lastAttempt(run.steps[run.cursor]!)?.reason ?? "waiting"} (oc_pending, oc_answer; then oc_workflow resume).`
        : run.status === "running"
          ? `\nStill running: oc_workflow {"action":"status","run":"${run.id}"}.`
          : run.status === "failed"
            ? `\nRetry the failed step: oc_workflow {"action":"retry","run":"${run.id}"}.`
            : "";
  return `${head}\n${progressLines(run)}${next}`;
}

function brief(run: WorkflowRun) {
  return { id: run.id, workflow: run.workflow.name, status: run.status, step: run.workflow.steps[run.cursor]?.name, created_at: run.createdAt };
}

/** The run for a client: its steps, each attempt's outcome as opencode recorded it, costs. */
function shape(run: WorkflowRun) {
  return {
    id: run.id,
    workflow: run.workflow.name,
    source: run.source,
    status: run.status,
    step: run.workflow.steps[run.cursor]?.name,
    ...(run.end ? { end: run.end } : {}),
    cost: runCost(run),
    inputs: run.inputs,
    steps: run.steps.map((s) => ({
      name: s.name,
      kind: s.kind,
      status: s.status,
      attempts: s.attempts.map((a) => ({
        n: a.n,
        status: a.status,
        started_at: a.startedAt,
        ...(a.endedAt ? { ended_at: a.endedAt } : {}),
        ...(a.reason ? { reason: a.reason } : {}),
        ...(a.turns
          ? {
              turns: a.turns.map((t) => ({
                session_id: t.sessionId,
                status: t.status,
                answer: t.answer?.slice(0, 500),
                cost: t.cost,
                worktree: t.worktree,
                ...(t.queued ? { task: { id: t.queued.taskId, worker: t.queued.worker } } : {}),
              })),
            }
          : {}),
        ...(a.checks ? { checks: a.checks.map((c) => ({ command: c.command, passed: c.passed, exit: c.exit })) } : {}),
        ...(a.verdict ? { verdict: a.verdict } : {}),
        ...(a.asked !== undefined ? { asked: a.asked } : {}),
        ...(a.signOff ? { sign_off: a.signOff } : {}),
        ...(a.delivered ? { delivered: a.delivered } : {}),
        ...(a.cost !== undefined ? { cost: a.cost } : {}),
      })),
    })),
  };
}
