// The Tasks binding's pure parts: a delegation as a task (status words, the failed → completed rule
// of the spec, given-back requests), and the handle put in place of the tool result on the wire.
import { describe, expect, it } from "vitest";
import type { Delegation } from "../../../src/core/ledger/delegations.js";
import { taskHandleResult } from "../../../src/mcp/tasks/handle-result.js";
import { withTaskHandle } from "../../../src/mcp/tasks/handles.js";
import { detailedTask } from "../../../src/mcp/tasks/task-view.js";
import { declaresTasks } from "../../../src/mcp/tasks/wire.js";

const base: Delegation = {
  id: "dlg_AAAAAAAAAAAAAAAAAAAAAA",
  kind: "delegate",
  origin: "oc_delegate",
  placement: "here",
  status: "working",
  sessions: ["ses_1"],
  createdAt: "2026-12-02T00:00:00.000Z",
  lastUpdatedAt: "2026-12-02T00:00:01.000Z",
  ttlMs: null,
  pollIntervalMs: 2000,
};
const same = (t: string) => t;
const permission = { kind: "permission" as const, id: "per_1", sessionId: "ses_1", permission: "bash", patterns: ["echo hi"], always: [], metadata: {} };

describe("a delegation as a task", () => {
  it("a call that threw is completed with the tool's isError result, never failed (kept for JSON-RPC errors)", () => {
    const t = detailedTask({ ...base, status: "failed", error: { name: "Error", message: "boom" } }, same, new Set());
    expect(t).toMatchObject({
      status: "completed",
      result: { resultType: "complete", isError: true, content: [{ type: "text", text: "oc_delegate failed: boom" }] },
    });
  });

  it("input_required lists each pending request as its form, keyed by opencode's id; a given-back one is not shown again", () => {
    const waiting = { ...base, status: "input_required" as const, pending: [permission], statusMessage: "waiting for an answer: permission bash: echo hi" };
    const asked = detailedTask(waiting, same, new Set());
    expect(asked.status).toBe("input_required");
    expect(Object.keys((asked as { inputRequests: object }).inputRequests)).toEqual(["per_1"]);
    expect((asked as { inputRequests: Record<string, { method: string }> }).inputRequests.per_1!.method).toBe("elicitation/create");
    const returned = detailedTask(waiting, same, new Set(["per_1"]));
    expect(returned).toMatchObject({ status: "working", statusMessage: expect.stringContaining("oc_answer") });
    expect(returned).not.toHaveProperty("inputRequests");
  });

  it("the handle takes the result's place on the wire, the private key gone, serverInfo kept", () => {
    const r = taskHandleResult(base, same);
    const sent = withTaskHandle({ jsonrpc: "2.0", id: 3, result: { ...r, _meta: { ...r._meta, "io.modelcontextprotocol/serverInfo": { name: "x" } } } });
    expect(sent.result).toEqual({
      resultType: "task",
      taskId: base.id,
      status: "working",
      createdAt: base.createdAt,
      lastUpdatedAt: base.lastUpdatedAt,
      ttlMs: null,
      pollIntervalMs: 2000,
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "x" } },
    });
    const other = { jsonrpc: "2.0", id: 4, result: { content: [] } };
    expect(withTaskHandle(other)).toBe(other);
  });

  it("the extension is declared by an object under extensions", () => {
    expect(declaresTasks({ extensions: { "io.modelcontextprotocol/tasks": {} } } as never)).toBe(true);
    expect(declaresTasks({ elicitation: {} })).toBe(false);
    expect(declaresTasks(undefined)).toBe(false);
  });
});
