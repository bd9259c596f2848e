// `opencode-conductor run-workflow`: a workflow run from a terminal, CI or cron, against the same
// opencode and state dir the MCP server uses. It walks the run until it ends or stops at a
// sign-off; a sign-off is never given by itself: the command says BLOCKED, exits 3, and the run
// waits in the state dir for `--answer RUN --approve` (or oc_workflow answer, or the library).
// With `--detach` (a queue configured) the run is put on the fleet's queue as a walk job and the
// command ends at once: a worker walks it, and every later answer or resume queues its walk again.
import { parseArgs } from "node:util";
import type { Config } from "./config.js";
import { UsageError } from "./core/errors.js";
import { workflowsApi } from "./core/workflows/api.js";
import { lastAttempt, runCost, type WorkflowRun } from "./core/workflows/run-record.js";

export const RUN_WORKFLOW_HELP = `Usage: opencode-conductor run-workflow FILE|NAME [--input KEY=VALUE]... [--directory DIR] [--detach] [--json]
       opencode-conductor run-workflow --resume RUN | --retry RUN | --cancel RUN | --status RUN [--json]
       opencode-conductor run-workflow --answer RUN --approve|--reject [--comment TEXT] [--json]

Runs a workflow (docs/workflows.md) until it ends or stops at a sign-off. Exit codes: 0 done,
1 failed or cancelled, 2 bad input (the workflow file, an input), 3 blocked: waiting for a sign-off
or a permission (the run waits in the state dir; answer it, then --resume).
NAME is a file of DIR/.opencode/workflows; --input takes a list as a,b,c for \`each\` steps.
--detach (needs OPENCODE_CONDUCTOR_QUEUE): the run is walked by a worker of the fleet (worker
--walks N), not by this command, which exits 0 once the run is queued; follow it with --status.`;

export async function runWorkflowCommand(argv: string[], config: Config): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        input: { type: "string", multiple: true },
        directory: { type: "string" },
        json: { type: "boolean" },
        detach: { type: "boolean" },
        resume: { type: "string" },
        retry: { type: "string" },
        cancel: { type: "string" },
        status: { type: "string" },
        answer: { type: "string" },
        approve: { type: "boolean" },
        reject: { type: "boolean" },
        comment: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    });
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${RUN_WORKFLOW_HELP}\n`);
    return 2;
  }
  const o = parsed.values;
  if (o.help) return (void process.stdout.write(`${RUN_WORKFLOW_HELP}\n`), 0);
  const { createConnection } = await import("./mcp/opencode-connection.js");
  const connection = createConnection(config);
  try {
    const conductor = await connection.conductor();
    const api = workflowsApi(conductor, { audit: config.auditPath ?? false });
    let run: WorkflowRun;
    if (o.status) run = await api.get(o.status);
    else if (o.cancel) run = await api.cancel(o.cancel);
    else if (o.resume) run = await api.resume(o.resume);
    else if (o.retry) run = await api.retry(o.retry);
    else if (o.answer) {
      if (o.approve === o.reject) throw new UsageError("--answer takes --approve or --reject (one of them).");
      run = await api.answer(o.answer, { approve: o.approve === true, comment: o.comment, by: "human (cli)" });
    } else {
      const [file, ...extra] = parsed.positionals;
      if (!file || extra.length) throw new UsageError(`Give one workflow FILE or NAME.\n\n${RUN_WORKFLOW_HELP}`);
      run = await api.start({ workflow: file, inputs: inputsOf(o.input ?? []), directory: o.directory, detach: o.detach === true });
      process.stderr.write(`run ${run.id}: ${run.workflow.name}${o.detach ? " (queued: a worker walks it)" : ""}\n`);
    }
    if (!o.status && !o.cancel && !o.detach) run = await api.wait(run.id);
    if (run.detached && run.status === "running" && !o.status && !o.cancel && !o.detach)
      process.stderr.write(
        `run ${run.id} is on the fleet's queue and no worker walks it now: it walks on when a worker takes walks (worker --walks N); follow it with --status\n`,
      );
    process.stdout.write(o.json ? `${JSON.stringify(run, null, 2)}\n` : `${summary(run)}\n`);
    return run.status === "done" ? 0 : run.status === "blocked" ? 3 : run.status === "running" ? 0 : 1;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`opencode-conductor: ${error.message}\n`);
    return 2;
  } finally {
    await connection.close().catch(() => undefined);
  }
}

function inputsOf(pairs: string[]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const pair of pairs) {
    const at = pair.indexOf("=");
    if (at <= 0) throw new UsageError(`--input takes KEY=VALUE (got ${JSON.stringify(pair.slice(0, 80))}).`);
    out[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return out;
}

function summary(run: WorkflowRun): string {
  const cost = runCost(run);
  const lines = run.steps.map((s) => {
    const a = lastAttempt(s);
    const sessions = a?.turns?.map((t) => `${t.sessionId ?? "-"} ${t.status}`).join(", ");
    const failed = a?.checks
      ?.filter((c) => !c.passed)
      .map(
        (c) =>
          `    ${c.command}: ${c.timedOut ? "timed out" : `exit ${c.exit}`}${c.output ? `\n      ${c.output.slice(-400).split("\n").join("\n      ")}` : ""}`,
      );
    return `  ${s.name.padEnd(16)} ${s.kind.padEnd(9)} ${s.status.padEnd(9)}${s.attempts.length > 1 ? ` ${s.attempts.length} attempts` : ""}${sessions ? `  ${sessions}` : ""}${a?.reason ? `  (${a.reason})` : ""}${failed?.length ? `\n${failed.join("\n")}` : ""}`;
  });
  const step = run.steps[run.cursor];
  const asked = run.status === "blocked" && step?.kind === "approval" ? lastAttempt(step)?.asked : undefined;
  const tail =
    asked !== undefined
      ? `BLOCKED: sign-off needed: ${asked}\n  opencode-conductor run-workflow --answer ${run.id} --approve   (or --reject)`
      : run.status === "blocked"
        ? `BLOCKED: ${lastAttempt(step!)?.reason ?? "waiting"}; then opencode-conductor run-workflow --resume ${run.id}`
        : `${run.status}${run.end?.reason ? `: ${run.end.reason}` : ""}`;
  return `${run.id} ${run.workflow.name}${cost !== undefined ? `  $${cost.toFixed(4)}` : ""}\n${lines.join("\n")}\n${tail}`;
}
