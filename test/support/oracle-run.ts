// The outcome oracle's steps, shared by the 1.x and 2.x suites: run a row's task through the MCP
// server, re-read the session straight from the engine's server, derive from that record alone
// what a truthful report says (recorded-outcome.ts: status, error, answer, tokens), and check the
// conductor's reports (oc_delegate, oc_wait, oc_result, the audit line) against it. The table's
// ending for the row (oracle-table.ts) is only the script's intent: opencode's record must bear it
// out too. The budget row's report is compared field by field with the recorded usage, the checks
// row's with the session's rounds and the check commands run here again.
import { execFile } from "node:child_process";
import { expect } from "vitest";
import type { McpSession } from "./mcp-client.js";
import type { OracleRow } from "./oracle-table.js";
import type { TurnOutcome } from "./recorded-outcome.js";
import type { ScriptedModel } from "./scripted-model.js";
import { text } from "./scripted-model.js";

/** What the oracle read back: the derived outcome of the session's last turn, and how many turns (user messages) it holds. */
export type Reread = TurnOutcome & { userTurns: number };

export interface OracleHarness {
  mcp: McpSession;
  model: ScriptedModel;
  /** The project the tasks (and their checks) run in. */
  directory: string;
  argsOf(r: OracleRow): Record<string, unknown>;
  /** The session re-read from the server, through the pure function, with the row's caps. */
  reread(sessionId: string, caps: { maxTokens?: number; maxCostUsd?: number }): Promise<Reread>;
  auditLines(): Array<Record<string, unknown>>;
}

export const modelOf = (r: OracleRow) => `fake/o-${r.name}`;

const capsOf = (args: Record<string, unknown>) => ({
  ...(typeof args.max_tokens === "number" ? { maxTokens: args.max_tokens } : {}),
  ...(typeof args.max_cost_usd === "number" ? { maxCostUsd: args.max_cost_usd } : {}),
});

/** A check command run again here, in the task's directory: whether it passes and its exit code. */
function runCheck(command: string, cwd: string): Promise<{ passed: boolean; exit: number | null }> {
  return new Promise((resolve) => {
    execFile("sh", ["-c", command], { cwd, timeout: 60_000 }, (error) => {
      const code = error ? ((error as { code?: unknown }).code ?? null) : 0;
      resolve({ passed: !error, exit: typeof code === "number" ? code : null });
    });
  });
}

/**
 * The conductor's report of one row's task against what the server recorded; returns the session id
 * and the status derived for the turn (what oc_wait and oc_result must say afterwards).
 */
export async function expectTruthful(h: OracleHarness, r: OracleRow, data: Record<string, unknown>): Promise<{ sessionId: string; turn: string }> {
  const sessionId = data.session_id as string;
  const args = h.argsOf(r);
  const rec = await h.reread(sessionId, capsOf(args));
  // The checks are the conductor's gate on a done turn: it is checks_failed when the last round of
  // them (run again here) fails.
  const checks = Array.isArray(args.checks) ? (args.checks as string[]) : [];
  const rerun = await Promise.all(checks.map((c) => runCheck(c, h.directory)));
  const expected = rec.status === "done" && rerun.some((c) => !c.passed) ? "checks_failed" : rec.status;
  const context = `${r.name}: ${JSON.stringify(data).slice(0, 600)}`;
  expect(data.status, context).toBe(expected);
  expect(expected, `${r.name}: the ending the table scripts is what the server recorded`).toBe(r.status);
  const reported = data.error as { name: string; message: string; statusCode?: number } | undefined;
  if (expected === "error" || expected === "interrupted") {
    expect(rec.error, `${r.name}: the server recorded an error`).toBeDefined();
    expect(reported?.name, r.name).toBe(rec.error!.name);
    expect(rec.error!.name, `${r.name}: the table's error`).toBe(r.error);
    if (rec.error!.name === "ToolStopped") expect(reported!.message).toBe(rec.error!.message);
    if (rec.error!.statusCode !== undefined) expect(reported!.statusCode).toBe(rec.error!.statusCode);
    if (r.statusCode !== undefined) expect(rec.error!.statusCode).toBe(r.statusCode);
  } else if (expected === "done" || expected === "checks_failed") {
    expect(reported).toBeUndefined();
  }
  expect(data.answer).toBe(rec.answer);
  if (expected === "budget_exceeded" || args.max_tokens !== undefined) {
    // Field by field: the usage the server recorded, the cap asked for, exceeded when it passed it.
    expect(data.budget).toEqual({
      tokens: rec.tokens,
      cost: rec.cost,
      exceeded: rec.tokens > (args.max_tokens as number),
      max_tokens: args.max_tokens,
    });
  }
  if (checks.length > 0) {
    // Field by field: one run of each check per round, a round per turn the session holds (the
    // task's, then one fix turn per failed round), each passing and exiting as it does here.
    const rounds = Array.from({ length: rec.userTurns }, (_, i) => i + 1);
    const runs = (data.checks as Array<Record<string, unknown>>).map(({ output: _output, ...c }) => c);
    expect(runs).toEqual(rounds.flatMap((round) => checks.map((command, i) => ({ round, command, passed: rerun[i]!.passed, exit: rerun[i]!.exit }))));
  }
  return { sessionId, turn: rec.status };
}

/** One ending, alone: oc_delegate (answering a request first where the row says), then oc_wait, oc_result and the audit line. */
export async function runRow(h: OracleHarness, r: OracleRow): Promise<void> {
  h.model.for(`o-${r.name}`).queue(...r.script());
  let result = await h.mcp.call("oc_delegate", h.argsOf(r), { timeoutMs: 180_000 });
  expect(result.isError, result.text).toBe(false);
  if (r.reject) {
    expect(result.data.status, result.text).toBe("blocked");
    const id = (result.data.pending as Array<{ id: string }>)[0]!.id;
    expect((await h.mcp.call("oc_answer", { request_id: id, decision: "reject" })).isError).toBe(false);
    result = await h.mcp.call("oc_wait", { session_id: result.data.session_id });
  }
  const { sessionId, turn } = await expectTruthful(h, r, result.data);
  // oc_wait and oc_result read the same session afterwards: the turn's outcome as recorded (the
  // budget is still known to them; the checks are the gate's, which they do not run).
  const waited = await h.mcp.call("oc_wait", { session_id: sessionId });
  expect(waited.data.status, waited.text).toBe(turn);
  const read = await h.mcp.call("oc_result", { session_id: sessionId });
  expect(read.data.status, read.text).toBe(turn);
  // The task's own line (a policy's answer to a request has a line of its own, with its decision).
  const line = h.auditLines().find((e) => e.tool === "oc_delegate" && e.session_id === sessionId && e.decision === undefined);
  if (!r.reject) expect(line?.outcome).toBe(result.data.status);
  h.model.for(`o-${r.name}`).clear(); // steps a stopped turn did not use
}

/**
 * Every ending at once: the rows a batch can hold through one oc_delegate_parallel with
 * concurrency as high as its rows (so all of them run together), and at the same time the rows
 * it cannot hold (a per-task budget or checks, a request answered by hand) each through its own
 * oc_delegate.
 */
export async function runAllAtOnce(h: OracleHarness, rows: OracleRow[]): Promise<void> {
  for (const r of rows) h.model.for(`o-${r.name}`).queue(...r.script());
  const alone = (r: OracleRow) => r.args?.max_tokens !== undefined || r.args?.checks !== undefined || r.reject === true;
  const batch = rows.filter((r) => !alone(r));
  // Approvals are the batch's: "deny" is what the rows that ask for one want.
  const tasks = batch.map((r) => {
    const { approvals: _, ...args } = h.argsOf(r);
    return args;
  });
  const [result] = await Promise.all([
    h.mcp.call("oc_delegate_parallel", { tasks, concurrency: batch.length, approvals: "deny" }, { timeoutMs: 240_000 }),
    ...rows.filter(alone).map((r) => runRow(h, r)),
  ]);
  expect(result.isError, result.text).toBe(false);
  const results = result.data.results as Array<Record<string, unknown>>;
  expect(results).toHaveLength(batch.length);
  for (const [i, r] of batch.entries()) await expectTruthful(h, r, results[i]!);
  const counts: Record<string, number> = {};
  for (const r of results) counts[r.status as string] = (counts[r.status as string] ?? 0) + 1;
  expect(result.data.counts).toEqual(counts);
  const line = h.auditLines().findLast((e) => e.tool === "oc_delegate_parallel") as { detail: { sessions: Array<{ status: string }> } };
  expect(line.detail.sessions.map((s) => s.status)).toEqual(results.map((r) => r.status));
  for (const r of rows) h.model.for(`o-${r.name}`).clear();
}

/** A follow-up through oc_send on a session whose first turn was done, then oc_wait. */
export async function runFollowUp(h: OracleHarness, r: OracleRow): Promise<void> {
  h.model.for("o-text").queue(text("first turn"));
  const first = await h.mcp.call("oc_delegate", { task: "first", model: "fake/o-text" });
  expect(first.data.status, first.text).toBe("done");
  h.model.for(`o-${r.name}`).queue(...r.script());
  const sent = await h.mcp.call("oc_send", { session_id: first.data.session_id, message: `follow-up ${r.name}`, model: modelOf(r) });
  expect(sent.isError, sent.text).toBe(false);
  const waited = await h.mcp.call("oc_wait", { session_id: first.data.session_id });
  await expectTruthful(h, r, waited.data);
}
