// The outcome oracle on opencode 2.x: the same table as the 1.x suite (test/support/oracle-table.ts,
// with the endings 2.x records differently), run through the MCP server, each report compared with
// the session re-read straight from the 2.x server; then every ending at once through
// oc_delegate_parallel. One round (the 1.x suite runs three): the 429/500 rows wait out 2.x's own
// backoff (2+4+8+16 s) each time. Rows that cannot apply to 2.x are listed with the reason.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectV2, type OpencodeV2Client } from "../../src/client/v2/index.js";
import { startMcpFor, type McpSession } from "../support/mcp-client.js";
import { startOpencode2, type V2Message } from "../support/opencode2.js";
import type { TestOpencode } from "../support/opencode.js";
import { NOT_ON_V2, oracleRows, type OracleRow } from "../support/oracle-table.js";
import { modelOf, runAllAtOnce, runFollowUp, runRow, type OracleHarness } from "../support/oracle-run.js";
import { hang, text } from "../support/scripted-model.js";

const rows = oracleRows("v2");
let server: TestOpencode;
let mcp: McpSession;
let v2: OpencodeV2Client;
let stateDir: string;

beforeAll(async () => {
  const models = Object.fromEntries([...rows.map((r) => r.name), "hung"].map((name) => [`o-${name}`, { name }]));
  // The pre-release has no per-session permission rules: the server asks before every shell call.
  server = await startOpencode2({ config: { provider: { fake: { models } } }, permission: { shell: "ask" } });
  stateDir = join(server.root, "state");
  mcp = await startMcpFor(server, { OPENCODE_CONDUCTOR_STATE_DIR: stateDir, OPENCODE_CONDUCTOR_APPROVALS: "return" });
  v2 = await connectV2({ url: server.url, password: server.password });
});
afterAll(async () => {
  await mcp?.close();
  await server?.stop();
});

const argsOf = (r: OracleRow) => ({ task: `oracle ${r.name}`, model: modelOf(r), ...r.args });
const textOf = (m: V2Message) =>
  (m.content ?? [])
    .flatMap((c) => (c.type === "text" && c.text ? [c.text] : []))
    .join("\n")
    .trim();

/** What the 2.x server recorded for the session's last turn: the steps after its last user message. */
async function recorded(sessionID: string) {
  const page = (await v2.request("session.messages", { path: { sessionID }, query: { order: "asc", limit: "200" } })) as { data: V2Message[] };
  const list = page.data;
  const replies = list.slice(list.findLastIndex((m) => m.type === "user") + 1).filter((m) => m.type === "assistant");
  const last = replies.at(-1);
  const error = last?.error ? { name: last.error.type, statusCode: last.error.status } : undefined;
  const texts = replies.map(textOf).filter(Boolean);
  return {
    replies: replies.length,
    error,
    answer: texts.at(-1) ?? "",
    completed: last?.time !== undefined && (last.time as { completed?: number }).completed !== undefined,
  };
}

function auditLines(): Array<Record<string, unknown>> {
  return readFileSync(join(stateDir, "audit.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

async function expectTruthful(r: OracleRow, data: Record<string, unknown>) {
  const sessionId = data.session_id as string;
  expect(data.status, `${r.name}: ${JSON.stringify(data).slice(0, 600)}`).toBe(r.status);
  const rec = await recorded(sessionId);
  const reported = data.error as { name: string; message: string; statusCode?: number } | undefined;
  if (r.status === "error" || r.status === "interrupted") {
    expect(reported?.name, r.name).toBe(r.error);
    expect(rec.error?.name, r.name).toBe(reported!.name);
    if (r.statusCode !== undefined) expect([reported!.statusCode, rec.error?.statusCode]).toEqual([r.statusCode, r.statusCode]);
  } else if (r.status === "done") {
    expect(reported).toBeUndefined();
    expect(rec.error).toBeUndefined();
    expect(rec.completed).toBe(true);
  }
  expect(data.answer).toBe(rec.answer);
  return sessionId;
}

const harness = (): OracleHarness => ({ mcp, model: server.model, argsOf, expectTruthful, auditLines });

describe("outcome oracle on opencode 2.x: rows that cannot apply", () => {
  it("are named with their reason (never skipped in silence)", () => {
    for (const [name, why] of Object.entries(NOT_ON_V2)) console.log(`[oracle v2] not applicable: ${name}: ${why}`);
    expect(Object.keys(NOT_ON_V2).sort()).toEqual(["429-slow", "500-slow", "hung-stream"]);
    expect(rows.map((r) => r.name)).not.toContain("hung-stream");
  });

  it("hung-stream instead: 2.x keeps the turn running (no chunk timeout); oc_interrupt ends it, interrupted as recorded", async () => {
    server.model.for("o-hung").queue(hang(), text("after the hang"));
    const r = await mcp.call("oc_delegate", { task: "oracle hung", model: "fake/o-hung", timeout_s: 5 });
    expect(r.data.status, r.text).toBe("running");
    const stopped = await mcp.call("oc_interrupt", { session_id: r.data.session_id });
    expect(stopped.data.status, stopped.text).toBe("interrupted");
    expect((await recorded(r.data.session_id as string)).error?.name).toBe("aborted");
    server.model.for("o-hung").clear();
  });
});

describe("outcome oracle on opencode 2.x: each ending, one at a time", () => {
  it.each(rows)("$name", (r) => runRow(harness(), r));
});

describe("outcome oracle on opencode 2.x: every ending at once", () => {
  it("oc_delegate_parallel reports each task as the server recorded it", () => runAllAtOnce(harness(), rows));
});

describe("outcome oracle on opencode 2.x: a follow-up through oc_send, then oc_wait", () => {
  it.each(rows.filter((r) => ["e400", "text"].includes(r.name)))("$name", (r) => runFollowUp(harness(), r));
});
