// The conductor of one run: walks its steps in order from the run record, writing each step's
// start and end there (and in the audit trail) before going on, so any process that reads the
// record can pick the run up where it stopped. A check or review that fails sends the run back to
// its agent step (at most its `max_retries` / `max_rounds`); an approval stops the run until a
// person answers; every outcome is the core's turn summary of what opencode recorded.
import type { AuditLog } from "../governance/audit.js";
import type { PlacementHost } from "../placement/host.js";
import type { Worktrees } from "../worktrees/worktrees.js";
import { thisProcess } from "../ledger/record.js";
import { DEFAULT_CHECK_RETRIES, DEFAULT_REVIEW_ROUNDS, type Step, type Workflow } from "./definition.js";
import { lastAttempt, type Attempt, type RecordedTurn, type StepStatus, type WorkflowRun } from "./run-record.js";
import type { RunRecords } from "./run-records.js";
import { runAgent } from "./steps/agent.js";
import { runCheckStep } from "./steps/check.js";
import { deliver } from "./steps/deliver.js";
import { runReview } from "./steps/review.js";
import { fill, type TemplateValues } from "./template.js";

export interface WalkContext {
  host: PlacementHost & { readonly worktrees?: Worktrees };
  store: RunRecords;
  audit?: AuditLog;
  /** Aborted by cancel: stops waiting (the run's sessions are interrupted by cancel itself). */
  signal: AbortSignal;
}

type Next = { go: "next" } | { go: "back"; to: number; feedback: string } | { go: "stop" };

const FINISHED: readonly StepStatus[] = ["done", "failed", "cancelled"];

/** Walks the run until it ends or stops at a sign-off; resolves with the record as it is then. */
export async function walk(ctx: WalkContext, runId: string): Promise<WorkflowRun> {
  let run = (await ctx.store.update(runId, (r) => ({ ...r, owner: thisProcess(), status: r.status === "blocked" ? "blocked" : "running" })))!;
  for (;;) {
    if (run.cancelRequestedAt || ctx.signal.aborted) return end(ctx, run, "cancelled", "cancelled on request");
    if (run.status === "blocked") return run;
    if (run.cursor >= run.workflow.steps.length) return end(ctx, run, "done");
    const index = run.cursor;
    const step = run.workflow.steps[index]!;
    const attempt = await begin(ctx, run, index);
    run = (await ctx.store.get(runId))!;
    let next: Next;
    try {
      next = await execute(ctx, run, step, attempt);
    } catch (error) {
      if (ctx.signal.aborted || (await ctx.store.get(runId))?.cancelRequestedAt) {
        run = (await ctx.store.get(runId))!;
        await finishAttempt(ctx, run.id, index, { status: "cancelled", reason: "cancelled on request" });
        return end(ctx, (await ctx.store.get(runId))!, "cancelled", "cancelled on request");
      }
      const reason = `${(error as Error).name}: ${(error as Error).message}`.slice(0, 2000);
      await finishAttempt(ctx, run.id, index, { status: "failed", reason });
      return end(ctx, (await ctx.store.get(runId))!, "failed", `step "${step.name}" failed: ${reason}`);
    }
    run = (await ctx.store.get(runId))!;
    const after = run.steps[index]!;
    if (next.go === "stop") {
      if (after.status === "blocked") return (await ctx.store.update(runId, (r) => ({ ...r, status: "blocked" })))!;
      const reason = lastAttempt(after)?.reason;
      return end(ctx, run, after.status === "cancelled" ? "cancelled" : "failed", `step "${step.name}" ${after.status}${reason ? `: ${reason}` : ""}`);
    }
    run = (await ctx.store.update(runId, (r) => (next.go === "back" ? sendBack(r, index, next.to, next.feedback) : { ...r, cursor: index + 1 })))!;
  }
}

/** The step's attempt to run now: the unfinished one (resumed), or a new one. */
async function begin(ctx: WalkContext, run: WorkflowRun, index: number): Promise<Attempt> {
  let chosen!: Attempt;
  await ctx.store.update(run.id, (r) => {
    const rec = r.steps[index]!;
    const last = lastAttempt(rec);
    if (last && !FINISHED.includes(last.status)) {
      // Started before (a crash or a sign-off in between): the same attempt, the same request id.
      chosen = last.status === "pending" ? { ...last, status: "running", startedAt: new Date().toISOString() } : last;
      rec.attempts[rec.attempts.length - 1] = chosen;
    } else {
      const n = rec.attempts.length + 1;
      chosen = { n, status: "running", startedAt: new Date().toISOString() };
      rec.attempts.push(chosen);
    }
    if (!chosen.requestId) chosen.requestId = `${r.id}.${rec.name}.${chosen.n}`;
    rec.status = chosen.status === "blocked" ? "blocked" : "running";
    return r;
  });
  const step = run.workflow.steps[index]!;
  await ctx.audit?.append({
    tool: "workflow",
    outcome: "started",
    detail: { run: run.id, workflow: run.workflow.name, step: step.name, kind: step.kind, attempt: chosen.n },
  });
  return chosen;
}

async function finishAttempt(ctx: WalkContext, runId: string, index: number, change: Partial<Attempt>): Promise<void> {
  let done!: Attempt;
  const run = await ctx.store.update(runId, (r) => {
    const rec = r.steps[index]!;
    const last = lastAttempt(rec)!;
    done = { ...last, ...change, ...(change.status && change.status !== "blocked" ? { endedAt: new Date().toISOString() } : {}) };
    if (done.turns) {
      const costs = done.turns.map((t) => t.cost).filter((c): c is number => c !== undefined);
      if (costs.length) done.cost = costs.reduce((a, b) => a + b, 0);
    }
    rec.attempts[rec.attempts.length - 1] = done;
    rec.status = done.status;
    return r;
  });
  const step = run!.workflow.steps[index]!;
  const sessions = done.turns?.map((t) => t.sessionId).filter(Boolean) as string[] | undefined;
  await ctx.audit?.append({
    tool: "workflow",
    outcome: done.status,
    ...(sessions?.length === 1 ? { session_id: sessions[0] } : {}),
    ...(done.cost !== undefined ? { cost: done.cost } : {}),
    ...(done.reason ? { error: done.reason } : {}),
    detail: {
      run: runId,
      workflow: run!.workflow.name,
      step: step.name,
      kind: step.kind,
      attempt: done.n,
      ...(done.turns ? { turns: done.turns.map((t) => ({ session_id: t.sessionId, status: t.status })) } : {}),
      ...(done.verdict ? { verdict: done.verdict.verdict } : {}),
      ...(done.signOff ? { decision: done.signOff.decision, by: done.signOff.by } : {}),
    },
  });
}

async function end(ctx: WalkContext, run: WorkflowRun, status: "done" | "failed" | "cancelled", reason?: string): Promise<WorkflowRun> {
  const ended = await ctx.store.update(run.id, (r) =>
    r.end ? undefined : { ...r, status, end: { status, at: new Date().toISOString(), ...(reason ? { reason } : {}) } },
  );
  await ctx.audit?.append({
    tool: "workflow",
    outcome: ended!.status,
    ...(reason ? { error: reason } : {}),
    detail: { run: run.id, workflow: run.workflow.name },
  });
  return ended!;
}

/** Values for templates: the inputs and what earlier steps answered. */
export function templateValues(run: WorkflowRun): TemplateValues {
  const steps: TemplateValues["steps"] = {};
  for (const rec of run.steps) {
    const last = [...rec.attempts].reverse().find((a) => a.status === "done" || a.verdict);
    if (!last) continue;
    steps[rec.name] = {
      output: last.turns?.map((t) => t.answer ?? "").join("\n\n") || last.signOff?.comment,
      comments: last.verdict?.comments.map((c) => `- ${c}`).join("\n"),
    };
  }
  return { inputs: run.inputs, steps };
}

function indexOf(w: Workflow, name: string): number {
  return w.steps.findIndex((s) => s.name === name);
}

/** The turns of the named agent step's last attempt that ended done. */
function turnsOf(run: WorkflowRun, name: string): RecordedTurn[] {
  const rec = run.steps[indexOf(run.workflow, name)]!;
  return [...rec.attempts].reverse().find((a) => a.status === "done")?.turns ?? [];
}

/** The agent step a check looks at: its `of`, else the last agent step before it. */
function checkedStep(w: Workflow, index: number, of: string | undefined): string {
  return of ?? [...w.steps.slice(0, index)].reverse().find((s) => s.kind === "agent")!.name;
}

/** Delivered steps run in a worktree unless they say otherwise; the rest share the project directory. */
export function isolationOf(w: Workflow, name: string): "shared" | "worktree" | "instance" {
  const step = w.steps.find((s) => s.name === name);
  if (step?.kind === "agent" && step.isolation) return step.isolation;
  return w.steps.some((s) => s.kind === "deliver" && s.of === name) ? "worktree" : "shared";
}

async function execute(ctx: WalkContext, run: WorkflowRun, step: Step, attempt: Attempt): Promise<Next> {
  const index = run.cursor;
  const values = templateValues(run);
  const directory = run.directory ?? ctx.host.engine.directory ?? process.cwd();
  if (step.kind === "agent") {
    const rec = run.steps[index]!;
    const previous = rec.attempts.length > 1 ? rec.attempts[rec.attempts.length - 2] : undefined;
    const turns = await runAgent({
      host: ctx.host,
      step,
      attempt,
      previous,
      values,
      directory: run.directory,
      isolation: isolationOf(run.workflow, step.name),
      signal: ctx.signal,
    });
    const statuses = turns.map((t) => t.status);
    if (statuses.every((s) => s === "done")) return (await finishAttempt(ctx, run.id, index, { status: "done", turns }), { go: "next" });
    if (statuses.includes("blocked")) {
      await finishAttempt(ctx, run.id, index, { status: "blocked", turns, reason: "a permission or question waits: answer it, then resume the run" });
      return { go: "stop" };
    }
    const reason = `opencode recorded ${turns.map((t) => `${t.sessionId ?? "no session"}: ${t.status}${t.error?.message ? ` (${t.error.message})` : ""}`).join("; ")}`;
    await finishAttempt(ctx, run.id, index, { status: "failed", turns, reason });
    return { go: "stop" };
  }
  if (step.kind === "check") {
    const of = checkedStep(run.workflow, index, step.of);
    const sentBack = run.steps[index]!.attempts.filter((a) => a.feedback === undefined && a.reason?.startsWith("sent back")).length;
    const outcome = await runCheckStep(step, turnsOf(run, of), values, directory, attempt.n);
    if (outcome.passed) return (await finishAttempt(ctx, run.id, index, { status: "done", checks: outcome.checks }), { go: "next" });
    const max = step.max_retries ?? DEFAULT_CHECK_RETRIES;
    if (step.on_fail && sentBack < max) {
      await finishAttempt(ctx, run.id, index, {
        status: "failed",
        checks: outcome.checks,
        reason: `sent back to "${step.on_fail}" (${sentBack + 1} of ${max})`,
      });
      return { go: "back", to: indexOf(run.workflow, step.on_fail), feedback: outcome.failure! };
    }
    const tries = step.on_fail ? `, after sending the run back ${sentBack} time${sentBack === 1 ? "" : "s"}` : "";
    await finishAttempt(ctx, run.id, index, { status: "failed", checks: outcome.checks, reason: `the checks failed${tries}` });
    return { go: "stop" };
  }
  if (step.kind === "review") {
    const outcome = await runReview(ctx.host, step, attempt, turnsOf(run, step.of), values, directory, ctx.signal);
    const turns = [outcome.turn];
    if (outcome.turn.status !== "done") {
      await finishAttempt(ctx, run.id, index, { status: "failed", turns, reason: `the reviewer's turn ended ${outcome.turn.status}` });
      return { go: "stop" };
    }
    if (!outcome.verdict) {
      await finishAttempt(ctx, run.id, index, {
        status: "failed",
        turns,
        reason: "the reviewer's answer held no verdict (a JSON block with verdict approve or request_changes)",
      });
      return { go: "stop" };
    }
    if (outcome.verdict.verdict === "approve")
      return (await finishAttempt(ctx, run.id, index, { status: "done", turns, verdict: outcome.verdict }), { go: "next" });
    const max = step.max_rounds ?? DEFAULT_REVIEW_ROUNDS;
    if (attempt.n < max) {
      await finishAttempt(ctx, run.id, index, {
        status: "failed",
        turns,
        verdict: outcome.verdict,
        reason: `changes requested: sent back to "${step.of}" (round ${attempt.n} of ${max})`,
      });
      const comments = outcome.verdict.comments.map((c) => `- ${c}`).join("\n") || "- (no comments given)";
      return { go: "back", to: indexOf(run.workflow, step.of), feedback: `A reviewer asked for changes:\n${comments}\nMake them.` };
    }
    await finishAttempt(ctx, run.id, index, {
      status: "failed",
      turns,
      verdict: outcome.verdict,
      reason: `changes still requested after ${max} review rounds`,
    });
    return { go: "stop" };
  }
  if (step.kind === "approval") {
    if (attempt.signOff) {
      const ok = attempt.signOff.decision === "approve";
      await finishAttempt(ctx, run.id, index, {
        status: ok ? "done" : "failed",
        ...(ok ? {} : { reason: `rejected by ${attempt.signOff.by}${attempt.signOff.comment ? `: ${attempt.signOff.comment}` : ""}` }),
      });
      return ok ? { go: "next" } : { go: "stop" };
    }
    await finishAttempt(ctx, run.id, index, { status: "blocked", asked: fill(step.message, values), reason: "waiting for a person's sign-off" });
    return { go: "stop" };
  }
  const delivered = await deliver(step, turnsOf(run, step.of), { directory, values, worktrees: ctx.host.worktrees });
  await finishAttempt(ctx, run.id, index, { status: "done", delivered });
  return { go: "next" };
}

/** Back to an earlier agent step with feedback: it gets a pending attempt, the steps after it run again. */
function sendBack(r: WorkflowRun, from: number, to: number, feedback: string): WorkflowRun {
  const target = r.steps[to]!;
  target.attempts.push({ n: target.attempts.length + 1, status: "pending", startedAt: new Date().toISOString(), feedback });
  target.status = "pending";
  for (let i = to + 1; i <= from; i++) r.steps[i]!.status = "pending";
  return { ...r, cursor: to };
}
