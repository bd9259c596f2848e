// A delegation (conductor.delegations, the core's ledger) as a task of the Tasks extension. The
// status words are the same (core/ledger/status.ts reads them from the conductor's own status of
// the turn), with one exception the specification imposes: `failed` is only for a JSON-RPC error,
// and a delegation whose call threw is a tool error to an MCP client (the tool answers it with
// `isError` today), so it is `completed` with that result. `completed` carries the CallToolResult
// the tool gives today (placed-answer.ts; oc_send's: turn-answer.ts), scrubbed of secrets as every answer is.
import type { PendingRequest } from "../../core/model/pending-request.js";
import type { CallToolResult, InputRequest } from "@modelcontextprotocol/server";
import type { Delegation, PlacedBatch, PlacedResult } from "../../core/ledger/delegations.js";
import { formFor } from "../elicit.js";
import { batchAnswer, taskAnswer } from "../placed-answer.js";
import { sendAnswer } from "../turn-answer.js";
import type { CreateTaskResult, DetailedTask, Task } from "./wire.js";

type Scrub = (text: string) => string;

function taskOf(d: Delegation, scrub: Scrub): Task {
  return {
    taskId: d.id,
    status: d.status === "failed" ? "completed" : d.status,
    ...(d.statusMessage ? { statusMessage: scrub(d.statusMessage) } : {}),
    createdAt: d.createdAt,
    lastUpdatedAt: d.lastUpdatedAt,
    ttlMs: d.ttlMs,
    pollIntervalMs: d.pollIntervalMs,
  };
}

/** The answer of the tools/call that started `d`. */
export function createTaskResult(d: Delegation, scrub: Scrub): CreateTaskResult {
  return { resultType: "task", ...taskOf(d, scrub) };
}

/**
 * What tasks/get answers for `d`. `returned`: request keys already answered without settling the
 * request (never shown again); while only those wait, the task is `working` and says where the
 * request can still be answered.
 */
export function detailedTask(d: Delegation, scrub: Scrub, returned: ReadonlySet<string>): DetailedTask {
  const task = taskOf(d, scrub);
  if (d.status === "input_required") {
    const open = (d.pending ?? []).filter((r) => !returned.has(r.id));
    if (open.length === 0)
      return {
        ...task,
        status: "working",
        statusMessage: scrub(`${d.statusMessage ?? "waiting for an answer"}; answer it with oc_answer or in the web console`),
      };
    return { ...task, status: "input_required", inputRequests: inputRequestsOf(open, scrub) };
  }
  if (d.status === "completed" || d.status === "failed") return { ...task, status: "completed", result: toolResultOf(d, scrub) };
  return { ...task, status: d.status };
}

/** Each pending permission or question as the form elicitation shows it, keyed by opencode's request id. */
export function inputRequestsOf(pending: PendingRequest[], scrub: Scrub): Record<string, InputRequest> {
  return Object.fromEntries(
    pending.map((r) => {
      const form = formFor(r);
      return [
        r.id,
        { method: "elicitation/create", params: { mode: "form", message: scrub(form.message), requestedSchema: form.requestedSchema } } as InputRequest,
      ];
    }),
  );
}

/** The CallToolResult of a 2026-07-28 tools/call (its `resultType` included: the result is that request's). */
function toolResultOf(d: Delegation, scrub: Scrub): CallToolResult & { resultType: "complete" } {
  const note = d.note ? `\nNote: ${d.note}` : "";
  if (d.error || !d.result) {
    const message = d.error ? `${d.origin} failed: ${d.error.message}` : `${d.origin} ended without a result.`;
    return { resultType: "complete", content: [{ type: "text", text: scrub(message + note) }], isError: true };
  }
  const answer =
    d.kind === "parallel"
      ? batchAnswer(d.result as PlacedBatch, d.requestId)
      : d.kind === "send"
        ? sendAnswer({ ...(d.result as PlacedResult), delivery: d.delivery ?? "queue" })
        : taskAnswer(d.result as PlacedResult, d.requestId);
  return {
    resultType: "complete",
    content: [{ type: "text", text: scrub(answer.text + note) }],
    structuredContent: JSON.parse(scrub(JSON.stringify(answer.data))) as Record<string, unknown>,
  };
}
