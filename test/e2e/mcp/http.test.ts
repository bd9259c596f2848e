// The built server over Streamable HTTP (`--http`), driven by the SDK's Client against real opencode:
// bearer token, Host-header (DNS rebinding) protection, refusing a non-loopback bind without a
// token, and a clean SIGTERM exit.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { request } from "node:http";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { CallToolResult } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../../src/client/spawn.js";
import { startHttpCli, type HttpCli } from "../../support/http-cli.js";
import { CLI } from "../../support/mcp-client.js";
import { startOpencode, type TestOpencode } from "../../support/opencode.js";
import { isAlive } from "../../support/registry.js";
import { scratchEnv } from "../../support/scratch-home.js";

const TOKEN = "test-token-0123456789abcdef";

/** A raw POST, so headers (Host, Authorization) are exactly what the test says. */
function rawPost(port: number, headers: Record<string, string>, body: unknown): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path: "/mcp",
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (text += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};

let opencode: TestOpencode;
let cli: HttpCli;

beforeAll(async () => {
  opencode = await startOpencode();
  const port = await freePort();
  cli = await startHttpCli(["--port", String(port)], {
    OPENCODE_URL: opencode.url,
    OPENCODE_PASSWORD: opencode.password,
    OPENCODE_CONDUCTOR_HTTP_TOKEN: TOKEN,
  });
});
afterAll(async () => {
  if (cli && cli.child.exitCode === null && cli.child.signalCode === null) {
    cli.child.kill("SIGKILL");
    await cli.exit;
  }
  await opencode?.stop();
});

describe("MCP server over Streamable HTTP", () => {
  it("listens on loopback at /mcp", () => {
    expect(cli.url).toBe(`http://127.0.0.1:${cli.port}/mcp`);
  });

  it("serves tools/list and oc_status to an SDK client that sends the bearer token", async () => {
    const client = new Client({ name: "e2e-http-client", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(cli.url), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["oc_delegate", "oc_status", "oc_wait"]));
      const status = (await client.callTool({ name: "oc_status", arguments: {} })) as CallToolResult;
      expect(status.isError ?? false).toBe(false);
      expect((status.structuredContent as { version: string }).version).toBe("1.18.33");
      expect(JSON.stringify(status)).not.toContain(opencode.password);
      expect(JSON.stringify(status)).not.toContain(TOKEN);
    } finally {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    }
  });

  it("answers 401 without the token, or with a wrong one", async () => {
    const host = `127.0.0.1:${cli.port}`;
    const none = await rawPost(cli.port, { host }, initialize);
    expect(none.status).toBe(401);
    expect(none.body).toContain("OPENCODE_CONDUCTOR_HTTP_TOKEN");
    const wrong = await rawPost(cli.port, { host, authorization: "Bearer not-the-token" }, initialize);
    expect(wrong.status).toBe(401);
    const bare = await rawPost(cli.port, { host, authorization: TOKEN }, initialize); // no "Bearer "
    expect(bare.status).toBe(401);
    const good = await rawPost(cli.port, { host, authorization: `Bearer ${TOKEN}` }, initialize);
    expect(good.status).toBe(200);
  });

  it("rejects a foreign Host header (DNS rebinding), even with the token", async () => {
    const evil = await rawPost(cli.port, { host: `evil.example:${cli.port}`, authorization: `Bearer ${TOKEN}` }, initialize);
    expect([400, 403]).toContain(evil.status);
    expect(evil.body).toContain("Host");
    const localhost = await rawPost(cli.port, { host: `localhost:${cli.port}`, authorization: `Bearer ${TOKEN}` }, initialize);
    expect(localhost.status).toBe(200);
  });

  it("answers 404 for an unknown session id, so clients re-initialize", async () => {
    const r = await rawPost(
      cli.port,
      { host: `127.0.0.1:${cli.port}`, authorization: `Bearer ${TOKEN}`, "mcp-session-id": "nope" },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
    );
    expect(r.status).toBe(404);
  });

  it("refuses --host 0.0.0.0 without a token, with exit code 2 and a clear message", async () => {
    const child = spawn(process.execPath, [CLI, "--http", "--host", "0.0.0.0", "--port", String(await freePort())], {
      env: { ...scratchEnv(), OPENCODE_URL: opencode.url },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    const [code] = await once(child, "exit");
    expect(code).toBe(2);
    expect(stderr).toContain("Refusing to listen on 0.0.0.0 without a token");
    expect(stderr).toContain("OPENCODE_CONDUCTOR_HTTP_TOKEN");
  });

  it("exits 0 on SIGTERM, even with a client connected, and leaves no process behind", async () => {
    // A connected client holds a session and its standalone SSE stream open.
    const client = new Client({ name: "e2e-http-client", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(cli.url), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } }));
    await client.listTools();
    const pid = cli.child.pid!;
    cli.child.kill("SIGTERM");
    const { code, signal } = await cli.exit;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(isAlive(pid)).toBe(false);
    // The port is free again.
    await expect(rawPost(cli.port, {}, initialize)).rejects.toThrow(/ECONNREFUSED/);
    await client.close();
  });
});
