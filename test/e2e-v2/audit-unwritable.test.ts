// An audit trail that cannot be written, against a real opencode 2.x through the built MCP server
// (the six cases on 1.x: test/e2e/mcp/audit-unwritable.test.ts; here the one root meets too, a
// directory where the file should be). With OPENCODE_CONDUCTOR_AUDIT_REQUIRED=1 a task is refused
// with the reason and the 2.x server's record shows no session; without it the task runs, its answer
// carries the warning, and its line is written once the file can be.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectV2, type OpencodeV2Client } from "../../src/client/v2/index.js";
import { startMcpFor, type McpSession } from "../support/mcp-client.js";
import { startOpencode2 } from "../support/opencode2.js";
import type { TestOpencode } from "../support/opencode.js";
import { text, toolCall } from "../support/scripted-model.js";

let server: TestOpencode;
let v2: OpencodeV2Client;
let dir: string;

beforeAll(async () => {
  server = await startOpencode2();
  v2 = await connectV2({ url: server.url, password: server.password });
  dir = mkdtempSync(join(tmpdir(), "occ-v2-unwritable-"));
});
afterAll(async () => {
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const sessions = async () => ((await v2.request("session.list", { query: { limit: "200" } })) as { data: unknown[] }).data.length;

/** Resolves when the server's stderr has said something matching `pattern` (a generous ceiling). */
function said(mcp: McpSession, pattern: RegExp): Promise<void> {
  let seen = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`stderr never said ${pattern}:\n${seen}`)), 60_000);
    mcp.transport.stderr!.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      if (!pattern.test(seen)) return;
      clearTimeout(timer);
      resolve();
    });
  });
}

describe("an audit path that is a directory, on opencode 2.x", () => {
  it("OPENCODE_CONDUCTOR_AUDIT_REQUIRED=1: the task is refused with the reason; the 2.x record has no new session", async () => {
    const audit = join(dir, "required", "audit.jsonl");
    mkdirSync(audit, { recursive: true });
    const mcp = await startMcpFor(server, { OPENCODE_CONDUCTOR_STATE_DIR: join(dir, "required"), OPENCODE_CONDUCTOR_AUDIT_REQUIRED: "1" });
    try {
      const before = await sessions();
      const r = await mcp.call("oc_delegate", { task: "Write refused.txt" });
      expect(r.isError, r.text).toBe(true);
      expect(r.text).toMatch(new RegExp(`^oc_delegate refused, nothing was started: the audit trail ${audit} cannot be written \\(since .*\\): EISDIR`));
      expect(await sessions()).toBe(before);
      const status = await mcp.call("oc_status");
      expect(status.data).toMatchObject({ engine: "v2", audit_trail: { path: audit, writable: false, error: expect.stringMatching(/EISDIR/) } });
    } finally {
      await mcp.close();
    }
  });

  it("without the option: the task runs, the answer warns, and the line is written once the file can be", async () => {
    const audit = join(dir, "plain", "audit.jsonl");
    mkdirSync(audit, { recursive: true });
    const mcp = await startMcpFor(server, { OPENCODE_CONDUCTOR_STATE_DIR: join(dir, "plain") });
    try {
      server.model.queue(toolCall("write", { path: "v2-unaudited.txt", content: "x\n" }), text("wrote it"));
      const r = await mcp.call("oc_delegate", { task: "write the file" });
      expect(r.data.status, r.text).toBe("done");
      expect(readFileSync(join(server.directory, "v2-unaudited.txt"), "utf8")).toBe("x\n");
      expect(r.text).toMatch(/WARNING: the audit trail .* cannot be written .*EISDIR.*; 1 line waits in memory and is written as soon as it can be/);
      expect(r.data.unwritable).toEqual([expect.objectContaining({ file: "audit trail", path: audit, held: 1 })]);
      const back = said(mcp, /the audit trail .* can be written again .*; 1 held line written/);
      rmSync(audit, { recursive: true });
      await back;
      const [line] = readFileSync(audit, "utf8")
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(line).toMatchObject({ tool: "oc_delegate", outcome: "done", session_id: r.data.session_id });
    } finally {
      await mcp.close();
    }
  });
});
