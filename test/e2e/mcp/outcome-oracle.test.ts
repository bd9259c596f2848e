// The outcome oracle: for each way a turn can end, run the task through the MCP server (stdio, the
// SDK's client), let opencode settle, re-read the session straight from opencode, and check that
// what the conductor reported (oc_delegate, oc_wait, oc_result, the audit line) is what opencode
// recorded. Then the same table once more, all tasks at a time through oc_delegate_parallel,
// since races show under load. Each row has its own model id, so its script is its own.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, type OpencodeClient } from "../../../src/client/index.js";
import { startMcpFor, type McpSession } from "../../support/mcp-client.js";
import { startOpencode, type TestOpencode } from "../../support/opencode.js";
import { oracleRows, type OracleRow } from "../../support/oracle-table.js";
import { modelOf, runAllAtOnce, runFollowUp, runRow, type OracleHarness } from "../../support/oracle-run.js";

type Row = OracleRow;

// The table is shared with the 2.x suite (test/e2e-v2/outcome-oracle.test.ts).
const rows: Row[] = oracleRows("v1");

let server: TestOpencode;
let mcp: McpSession;
let client: OpencodeClient;
let stateDir: string;

beforeAll(async () => {
  const models = Object.fromEntries(rows.map((r) => [`o-${r.name}`, { name: r.name }]));
  server = await startOpencode({ config: { provider: { fake: { models } } } });
  stateDir = join(server.root, "state");
  mcp = await startMcpFor(server, { OPENCODE_CONDUCTOR_STATE_DIR: stateDir, OPENCODE_CONDUCTOR_APPROVALS: "return" });
  client = connect({ url: server.url, password: server.password, directory: server.directory });
});
afterAll(async () => {
  await mcp?.close();
  await server?.stop();
});

const argsOf = (r: Row) => ({ task: `oracle ${r.name}`, model: modelOf(r), permissions: "auto", ...r.args });

/** What opencode recorded for the session's last turn, read straight from it. */
async function recorded(sessionId: string) {
  const messages = await client.call("session.messages", { path: { sessionID: sessionId } });
  const user = messages.findLast((m) => m.info.role === "user");
  const replies = messages.filter((m) => m.info.role === "assistant" && m.info.parentID === user?.info.id);
  const last = replies.at(-1)?.info;
  const error = last?.role === "assistant" ? (last.error as { name: string; data?: { statusCode?: number } } | undefined) : undefined;
  const toolError = replies.flatMap((m) => m.parts.flatMap((p) => (p.type === "tool" && p.state.status === "error" ? [p.state.error] : []))).at(-1);
  const texts = replies
    .map((m) =>
      m.parts
        .flatMap((p) => (p.type === "text" && !p.synthetic ? [p.text] : []))
        .join("\n")
        .trim(),
    )
    .filter(Boolean);
  return { replies: replies.length, error, toolError, answer: texts.at(-1) ?? "", completed: last?.role === "assistant" && last.time.completed !== undefined };
}

function auditLines(): Array<Record<string, unknown>> {
  return readFileSync(join(stateDir, "audit.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** The conductor's report of one row's task against what opencode recorded. */
async function expectTruthful(r: Row, data: Record<string, unknown>) {
  const sessionId = data.session_id as string;
  expect(data.status, `${r.name}: ${JSON.stringify(data).slice(0, 600)}`).toBe(r.status);
  const rec = await recorded(sessionId);
  const reported = data.error as { name: string; message: string; statusCode?: number } | undefined;
  if (r.status === "error" || r.status === "interrupted") {
    expect(reported?.name, r.name).toBe(r.error);
    // The recorded error (on the reply, or none at all when the model was unknown) is the reported one.
    if (rec.error) expect(rec.error.name).toBe(reported!.name);
    else if (r.error === "ToolStopped") expect(reported!.message).toBe(rec.toolError);
    else expect(rec.replies).toBe(0);
    if (r.statusCode !== undefined) expect([reported!.statusCode, rec.error?.data?.statusCode]).toEqual([r.statusCode, r.statusCode]);
  } else if (r.status === "done") {
    expect(reported).toBeUndefined();
    expect(rec.error).toBeUndefined();
    expect(rec.completed).toBe(true);
  }
  expect(data.answer).toBe(rec.answer);
  return sessionId;
}

// Three rounds: races show up as a flake in one of them.
const ROUNDS = [1, 2, 3];

const harness = (): OracleHarness => ({ mcp, model: server.model, argsOf, expectTruthful, auditLines });

describe.each(ROUNDS)("outcome oracle, round %i: each ending, one at a time", () => {
  it.each(rows)("$name", (r) => runRow(harness(), r));
});

describe.each(ROUNDS)("outcome oracle, round %i: every ending at once", () => {
  it("oc_delegate_parallel reports each task as opencode recorded it, 12 at a time", () => runAllAtOnce(harness(), rows));
});

describe("outcome oracle: a follow-up through oc_send, then oc_wait", () => {
  it.each(rows.filter((r) => ["e400", "429-fast", "text"].includes(r.name)))("$name", (r) => runFollowUp(harness(), r));
});
