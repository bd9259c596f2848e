// Sessions of another opencode on this machine (a TUI window, a `serve` someone started): found by
// id and listed, when that server accepts our password.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect } from "../../../src/client/index.js";
import { startMcp, type McpSession } from "../../support/mcp-client.js";
import { startOpencode, type TestOpencode } from "../../support/opencode.js";
import { text } from "../../support/scripted-model.js";

const password = randomBytes(12).toString("hex");
let main: TestOpencode;
let other: TestOpencode;
let mcp: McpSession;
let otherSession: string;

beforeAll(async () => {
  [main, other] = await Promise.all([startOpencode({ password }), startOpencode({ password })]);
  otherSession = (await connect({ url: other.url, password, directory: other.directory }).call("session.create", { body: { title: "open in my TUI" } })).id;
  mcp = await startMcp({ OPENCODE_URL: main.url, OPENCODE_PASSWORD: password });
});
afterAll(async () => {
  await mcp?.close();
  await Promise.all([main?.stop(), other?.stop()]);
});

describe("live sessions on other servers", () => {
  it("oc_sessions with all_servers lists the other server's session with its server", async () => {
    const r = await mcp.call("oc_sessions", { all_servers: true });
    expect(r.isError, r.text).toBe(false);
    const row = (r.data.sessions as Array<{ id: string; server: string }>).find((s) => s.id === otherSession);
    expect(row?.server).toBe(other.url);
    const mainOnly = await mcp.call("oc_sessions");
    expect((mainOnly.data.sessions as Array<{ id: string }>).map((s) => s.id)).not.toContain(otherSession);
  });

  it("oc_send, oc_wait and oc_result find the server that holds a session id", async () => {
    other.model.queue(text("Answered on the other server."));
    const sent = await mcp.call("oc_send", { session_id: otherSession, message: "hello from the conductor" });
    expect(sent.isError, sent.text).toBe(false);
    const waited = await mcp.call("oc_wait", { session_id: otherSession });
    expect(waited.data.status, waited.text).toBe("done");
    expect(waited.data.answer).toBe("Answered on the other server.");
    expect(other.model.requestsFor(otherSession).length).toBeGreaterThan(0);
    expect(main.model.requests.filter((q) => q.kind === "chat")).toHaveLength(0);
    const state = await mcp.call("oc_result", { session_id: otherSession });
    expect(state.data.state).toBe("idle");
    expect(JSON.stringify([sent, waited, state])).not.toContain(password);
  });
});
