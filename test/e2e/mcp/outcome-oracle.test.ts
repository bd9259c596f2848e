// The outcome oracle: for each way a turn can end, run the task through the MCP server (stdio, the
// SDK's client), re-read the session straight from opencode, derive from that record what a
// truthful report says (test/support/recorded-outcome.ts), and check that what the conductor
// reported (oc_delegate, oc_wait, oc_result, the audit line) is that. Then the same table once
// more, every task at the same time (oc_delegate_parallel with concurrency as high as its rows,
// and the rows a batch cannot hold beside it), since races show under load. Each row has its own
// model id, so its script is its own.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { connect, type OpencodeClient } from "../../../src/client/index.js";
import { startMcpFor, type McpSession } from "../../support/mcp-client.js";
import { startOpencode, type TestOpencode } from "../../support/opencode.js";
import { oracleRows, type OracleRow } from "../../support/oracle-table.js";
import { modelOf, runAllAtOnce, runFollowUp, runRow, type OracleHarness, type Reread } from "../../support/oracle-run.js";
import { turnOutcome, type MessageEvidence } from "../../support/recorded-outcome.js";

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

/** The session re-read straight from opencode, and what a truthful report of its last turn says. */
async function reread(sessionId: string, caps: { maxTokens?: number; maxCostUsd?: number }): Promise<Reread> {
  const [messages, status] = await Promise.all([client.call("session.messages", { path: { sessionID: sessionId } }), client.call("session.status")]);
  const idle = (status as Record<string, unknown>)[sessionId] === undefined;
  const recorded = messages as unknown as MessageEvidence[];
  return { ...turnOutcome(recorded, { idle, ...caps }), userTurns: recorded.filter((m) => m.info.role === "user").length };
}

function auditLines(): Array<Record<string, unknown>> {
  return readFileSync(join(stateDir, "audit.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

// Three rounds: races show up as a flake in one of them.
const ROUNDS = [1, 2, 3];

const harness = (): OracleHarness => ({ mcp, model: server.model, directory: server.directory, argsOf, reread, auditLines });

describe.each(ROUNDS)("outcome oracle, round %i: each ending, one at a time", () => {
  it.each(rows)("$name", (r) => runRow(harness(), r));
});

describe.each(ROUNDS)("outcome oracle, round %i: every ending at once", () => {
  it("oc_delegate_parallel reports each task as opencode recorded it, all of them at a time (and the rows a batch cannot hold beside it)", () =>
    runAllAtOnce(harness(), rows));
});

describe("outcome oracle: a follow-up through oc_send, then oc_wait", () => {
  it.each(rows.filter((r) => ["e400", "429-fast", "text"].includes(r.name)))("$name", (r) => runFollowUp(harness(), r));
});
