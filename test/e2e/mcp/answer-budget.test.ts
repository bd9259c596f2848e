// Every tool answer within its size budget (docs/answer-budgets.md), against the real opencode with
// 1,000 sessions and a session of 1,000 messages: the listing, the export, a page of messages and the
// API answer are cut to the budget with a link, and the linked pages give back the whole answer, as
// opencode holds it (counted from its own record, read back over HTTP).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, type OpencodeClient } from "../../../src/client/index.js";
import { ANSWER_BUDGET_CHARS } from "../../../src/mcp/answer-budget.js";
import { startMcpFor, type McpSession, type ToolCall } from "../../support/mcp-client.js";
import { startOpencode, type TestOpencode } from "../../support/opencode.js";

const SESSIONS = 1_000;
const MESSAGES = 1_000;
let server: TestOpencode;
let client: OpencodeClient;
let mcp: McpSession;
let longSession: string;

async function inBatches(n: number, size: number, each: (i: number) => Promise<unknown>): Promise<void> {
  for (let from = 0; from < n; from += size) await Promise.all(Array.from({ length: Math.min(size, n - from) }, (_, i) => each(from + i)));
}

beforeAll(async () => {
  server = await startOpencode();
  client = connect({ url: server.url, password: server.password, directory: server.directory });
  longSession = (await client.call("session.create", { body: { title: "a long history" } })).id;
  // User messages that opencode records without running the model (noReply): a long history, fast.
  for (let i = 0; i < MESSAGES; i++)
    await client.call("session.prompt", {
      path: { sessionID: longSession },
      body: { noReply: true, parts: [{ type: "text", text: `message ${i}: ${"words ".repeat(20)}` }] },
    });
  await inBatches(SESSIONS - 1, 20, (i) => client.call("session.create", { body: { title: `session ${i} ${"of many ".repeat(4)}` } }));
  mcp = await startMcpFor(server);
}, 600_000);
afterAll(async () => {
  await mcp?.close();
  await server?.stop();
});

function withinBudget(r: ToolCall): void {
  expect(r.isError, r.text.slice(0, 500)).toBe(false);
  const first = r.raw.content[0] as { type: string; text: string };
  expect(first.text.length).toBeLessThanOrEqual(ANSWER_BUDGET_CHARS);
  expect(JSON.stringify(r.raw.structuredContent).length).toBeLessThanOrEqual(ANSWER_BUDGET_CHARS);
}

/** The whole of a cut answer's data, read page by page from the resource it links. */
async function wholeData(r: ToolCall): Promise<unknown> {
  const overflow = r.data.overflow as { data: string; pages: { data: number } };
  expect(r.raw.content.some((c) => c.type === "resource_link" && c.uri === overflow.data)).toBe(true);
  let json = "";
  for (let page = 1; page <= overflow.pages.data; page++) {
    const read = await mcp.client.readResource({ uri: overflow.data.replace(/\/1$/, `/${page}`) });
    const text = (read.contents[0] as { text: string }).text;
    expect(text.length).toBeLessThanOrEqual(ANSWER_BUDGET_CHARS);
    json += text;
  }
  return JSON.parse(json);
}

describe("answers within their budget", () => {
  it("the export of a 1,000-message session: cut, linked, and whole in its pages", async () => {
    const recorded = await client.call("session.messages", { path: { sessionID: longSession } });
    expect(recorded.length).toBe(MESSAGES);
    const r = await mcp.call("oc_session", { action: "export", session_id: longSession }, { timeoutMs: 300_000 });
    withinBudget(r);
    const whole = (await wholeData(r)) as { result: { messages: Array<{ info: { id: string } }> } };
    expect(whole.result.messages.map((m) => m.info.id)).toEqual(recorded.map((m) => m.info.id));
  });

  it("a page of messages and the session's diff", async () => {
    withinBudget(await mcp.call("oc_session", { action: "messages", session_id: longSession, limit: 200 }));
    withinBudget(await mcp.call("oc_session", { action: "diff", session_id: longSession }));
  });

  it("a listing of 500 of the 1,000 sessions", async () => {
    const r = await mcp.call("oc_sessions", { limit: 500 });
    withinBudget(r);
    const whole = (await wholeData(r)) as { sessions: Array<{ id: string }> };
    expect(whole.sessions).toHaveLength(500);
  });

  it("an API answer: the whole session list", async () => {
    const r = await mcp.call("oc_api", { operation: "session.list" });
    withinBudget(r);
  });
});
