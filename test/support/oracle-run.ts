// The outcome oracle's steps, shared by the 1.x and 2.x suites: run a row's task through the MCP
// server, then check the conductor's reports (oc_delegate, oc_wait, oc_result, the audit line)
// against what the engine's server recorded (each suite reads its server its own way).
import { expect } from "vitest";
import type { McpSession } from "./mcp-client.js";
import type { OracleRow } from "./oracle-table.js";
import type { ScriptedModel } from "./scripted-model.js";
import { text } from "./scripted-model.js";

export interface OracleHarness {
  mcp: McpSession;
  model: ScriptedModel;
  argsOf(r: OracleRow): Record<string, unknown>;
  /** Asserts one report against the recorded session; returns the session id. */
  expectTruthful(r: OracleRow, data: Record<string, unknown>): Promise<string>;
  auditLines(): Array<Record<string, unknown>>;
}

export const modelOf = (r: OracleRow) => `fake/o-${r.name}`;

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
  const sessionId = await h.expectTruthful(r, result.data);
  // oc_wait and oc_result read the same session afterwards: the same outcome (the gate and the
  // budget are the conductor's own verdicts; oc_wait still knows the budget, the checks it did not run).
  const turnStatus = r.status === "checks_failed" ? "done" : r.status;
  const waited = await h.mcp.call("oc_wait", { session_id: sessionId });
  expect(waited.data.status, waited.text).toBe(turnStatus);
  const read = await h.mcp.call("oc_result", { session_id: sessionId });
  expect(read.data.status, read.text).toBe(turnStatus);
  // The task's own line (a policy's answer to a request has a line of its own, with its decision).
  const line = h.auditLines().find((e) => e.tool === "oc_delegate" && e.session_id === sessionId && e.decision === undefined);
  if (!r.reject) expect(line?.outcome).toBe(r.status);
  h.model.for(`o-${r.name}`).clear(); // steps a stopped turn did not use
}

/** Every ending at once through oc_delegate_parallel (budget, checks and the row that answers a request itself ran alone). */
export async function runAllAtOnce(h: OracleHarness, rows: OracleRow[]): Promise<void> {
  for (const r of rows) h.model.for(`o-${r.name}`).queue(...r.script());
  const batch = rows.filter((r) => r.status !== "budget_exceeded" && r.status !== "checks_failed" && !r.reject);
  // Approvals are the batch's: "deny" is what the rows that ask for one want.
  const tasks = batch.map((r) => {
    const { approvals: _, ...args } = h.argsOf(r);
    return args;
  });
  const result = await h.mcp.call("oc_delegate_parallel", { tasks, concurrency: 12, approvals: "deny" }, { timeoutMs: 240_000 });
  expect(result.isError, result.text).toBe(false);
  const results = result.data.results as Array<Record<string, unknown>>;
  expect(results).toHaveLength(batch.length);
  for (const [i, r] of batch.entries()) await h.expectTruthful(r, results[i]!);
  const counts: Record<string, number> = {};
  for (const r of batch) counts[r.status] = (counts[r.status] ?? 0) + 1;
  expect(result.data.counts).toEqual(counts);
  const line = h.auditLines().findLast((e) => e.tool === "oc_delegate_parallel") as { detail: { sessions: Array<{ status: string }> } };
  expect(line.detail.sessions.map((s) => s.status)).toEqual(batch.map((r) => r.status));
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
  await h.expectTruthful(r, waited.data);
}
