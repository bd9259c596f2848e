// Stateless HTTP on 2026-07-28: two `opencode-conductor --http` processes on two ports, sharing the
// state dir and the opencode server, behind a round-robin proxy (no affinity), serve one 2026-07-28
// client. Each delegation asks an approval: the call that answers input_required and the call sent
// again with the answer land on different replicas, and every result equals what opencode recorded.
// A 2025-11-25 client through the same proxy keeps its session on the replica that opened it.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect } from "../../../src/client/connect.js";
import { startHttpCli, type HttpCli } from "../../support/http-cli.js";
import { startProxy, type HttpProxy } from "../../support/http-proxy.js";
import { toolCallOf } from "../../support/mcp-client.js";
import { startOpencode, type TestOpencode } from "../../support/opencode.js";
import { text, toolCall } from "../../support/scripted-model.js";
import { readMessages } from "../../support/turns.js";

const DELEGATIONS = 20;
let opencode: TestOpencode;
let replicas: HttpCli[];
let proxy: HttpProxy;
let stateDir: string;

beforeAll(async () => {
  opencode = await startOpencode({ permission: { bash: "ask" } });
  stateDir = join(opencode.root, "state");
  const env = {
    OPENCODE_URL: opencode.url,
    OPENCODE_PASSWORD: opencode.password,
    OPENCODE_CONDUCTOR_DIRECTORY: opencode.directory,
    OPENCODE_CONDUCTOR_STATE_DIR: stateDir,
  };
  replicas = await Promise.all([startHttpCli(["--port", "0"], env), startHttpCli(["--port", "0"], env)]);
  proxy = await startProxy(replicas.map((r) => r.url));
});
afterAll(async () => {
  await proxy?.close();
  for (const r of replicas ?? []) {
    if (r.child.exitCode === null && r.child.signalCode === null) {
      r.child.kill("SIGTERM");
      await r.exit;
    }
  }
  await opencode?.stop();
});

async function client(era: "legacy" | "modern"): Promise<Client> {
  const c = new Client(
    { name: "replica-test", version: "1.0.0" },
    { capabilities: { elicitation: { form: {} } }, ...(era === "modern" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {}) },
  );
  c.setRequestHandler("elicitation/create", async () => ({ action: "accept", content: { decision: "once" } }));
  await c.connect(new StreamableHTTPClientTransport(new URL(proxy.url)));
  return c;
}

const calls = (from: number) =>
  proxy.passed.slice(from).filter((p) => (p.body as { method?: string } | undefined)?.method === "tools/call") as Array<{
    target: number;
    body: { params: { requestState?: string } };
  }>;

describe("two replicas behind a round-robin proxy", () => {
  it(`serve ${DELEGATIONS} delegations with approvals from one 2026-07-28 client; each answer lands on the other replica, every result is opencode's`, async () => {
    const c = await client("modern");
    expect(c.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    const oc = connect({ url: opencode.url, password: opencode.password, directory: opencode.directory });
    for (let i = 0; i < DELEGATIONS; i++) {
      const marker = join(opencode.directory, `replica-${i}.txt`);
      opencode.model.queue(toolCall("bash", { command: `echo ${i} > ${marker}`, description: "write marker" }), text(`Wrote ${i}.`));
      const from = proxy.passed.length;
      const r = toolCallOf(await c.callTool({ name: "oc_delegate", arguments: { task: `Write marker ${i}`, permissions: "agent" } }, { timeout: 120_000 }));
      expect(r.data.status, r.text).toBe("done");
      expect(r.data.answer).toBe(`Wrote ${i}.`);
      expect(readFileSync(marker, "utf8").trim()).toBe(String(i));
      // The round and the call sent again with the answer: two calls, two replicas.
      const [asked, answered] = calls(from);
      expect(asked!.body.params.requestState).toBeUndefined();
      expect(answered!.body.params.requestState).toBeTypeOf("string");
      expect(answered!.target).not.toBe(asked!.target);
      // What opencode recorded: one session, the bash ran once and completed, the last reply is the answer.
      const messages = await readMessages(oc, r.data.session_id as string);
      const bash = messages.flatMap((m) => m.parts).filter((p) => p.type === "tool" && p.tool === "bash");
      expect(bash.map((p) => p.type === "tool" && p.state.status)).toEqual(["completed"]);
      const last = messages.findLast((m) => m.info.role === "assistant")!;
      expect(last.parts.filter((p) => p.type === "text").map((p) => (p as { text: string }).text)).toEqual([`Wrote ${i}.`]);
    }
    // Nothing lost: every delegation's human answer is in the shared audit trail, each once.
    const audit = readFileSync(join(stateDir, "audit.jsonl"), "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(audit.filter((e) => e.by === "human" && e.decision === "once")).toHaveLength(DELEGATIONS);
    expect(new Set(calls(0).map((call) => call.target))).toEqual(new Set([0, 1]));
    await c.close();
  }, 600_000); // a ceiling for a loaded machine (20 delegations take about 15 s on a quiet one)

  it("a 2025-11-25 client keeps its session on the replica that opened it", async () => {
    const from = proxy.passed.length;
    const c = await client("legacy");
    const marker = join(opencode.directory, "replica-legacy.txt");
    opencode.model.queue(toolCall("bash", { command: `echo legacy > ${marker}`, description: "write marker" }), text("Wrote legacy."));
    const r = toolCallOf(await c.callTool({ name: "oc_delegate", arguments: { task: "Write the legacy marker", permissions: "agent" } }, { timeout: 120_000 }));
    expect(r.data.status, r.text).toBe("done");
    expect(existsSync(marker)).toBe(true);
    const mine = proxy.passed.slice(from).filter((p) => p.sessionId !== undefined);
    expect(mine.length).toBeGreaterThan(1);
    expect(new Set(mine.map((p) => p.target)).size).toBe(1);
    await c.close();
  });
});
