// The outcome oracle on opencode 2.x: the same table as the 1.x suite (test/support/oracle-table.ts,
// with the endings 2.x records differently), run through the MCP server, each report compared with
// what the session re-read straight from the 2.x server says (test/support/recorded-outcome.ts);
// then every ending at the same time (oc_delegate_parallel with concurrency as high as its rows). One round (the 1.x suite runs three): the 429/500 rows wait out 2.x's own
// backoff (2+4+8+16 s) each time. Rows that cannot apply to 2.x are listed with the reason.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectV2, type OpencodeV2Client } from "../../src/client/v2/index.js";
import { startMcpFor, type McpSession } from "../support/mcp-client.js";
import { startOpencode2 } from "../support/opencode2.js";
import type { TestOpencode } from "../support/opencode.js";
import { NOT_ON_V2, oracleRows, type OracleRow } from "../support/oracle-table.js";
import { modelOf, runAllAtOnce, runFollowUp, runRow, type OracleHarness, type Reread } from "../support/oracle-run.js";
import { turnOutcomeV2, type RecordedV2Message } from "../support/recorded-outcome.js";
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
/** The session re-read straight from the 2.x server, and what a truthful report of its last turn says. */
async function reread(sessionID: string, caps: { maxTokens?: number; maxCostUsd?: number }): Promise<Reread> {
  const [page, active] = await Promise.all([
    v2.request("session.messages", { path: { sessionID }, query: { order: "asc", limit: "200" } }) as Promise<{ data: RecordedV2Message[] }>,
    v2.request("session.active", {}) as Promise<{ data?: Record<string, unknown> }>,
  ]);
  const idle = active.data?.[sessionID] === undefined;
  return { ...turnOutcomeV2(page.data, { idle, ...caps }), userTurns: page.data.filter((m) => m.type === "user").length };
}

function auditLines(): Array<Record<string, unknown>> {
  return readFileSync(join(stateDir, "audit.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

const harness = (): OracleHarness => ({ mcp, model: server.model, directory: server.directory, argsOf, reread, auditLines });

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
    expect(await reread(r.data.session_id as string, {})).toMatchObject({ status: "interrupted", error: { name: "aborted" } });
    server.model.for("o-hung").clear();
  });
});

describe("outcome oracle on opencode 2.x: each ending, one at a time", () => {
  it.each(rows)("$name", (r) => runRow(harness(), r));
});

describe("outcome oracle on opencode 2.x: every ending at once", () => {
  it("oc_delegate_parallel reports each task as the server recorded it, all of them at a time (and the rows a batch cannot hold beside it)", () =>
    runAllAtOnce(harness(), rows));
});

describe("outcome oracle on opencode 2.x: a follow-up through oc_send, then oc_wait", () => {
  it.each(rows.filter((r) => ["e400", "text"].includes(r.name)))("$name", (r) => runFollowUp(harness(), r));
});
