// Streamable HTTP sessions that their client abandoned (closed without DELETE) are closed after the
// idle time; a session with an open request is never cut off.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../../../src/config.js";
import { createServer } from "../../../src/mcp/server.js";
import { startHttp } from "../../../src/mcp/transports/http.js";

const config = loadConfig({ OPENCODE_CONDUCTOR_AUDIT: "off" });
const newServer = () => createServer({ config, conductor: () => Promise.reject(new Error("not needed")) });
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: "ttl-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

describe("HTTP session idle expiry", () => {
  it("closes a session its client left without DELETE; the client re-initializes and goes on", async () => {
    const http = await startHttp({ host: "127.0.0.1", port: 0, sessionTtlMs: 300, newServer });
    close = http.close;
    const gone = await connect(http.url);
    expect(http.sessionCount()).toBe(1);
    await gone.close(); // drops its streams, sends no DELETE
    await vi.waitFor(() => expect(http.sessionCount()).toBe(0), { timeout: 15_000, interval: 50 });

    const next = await connect(http.url);
    expect((await next.listTools()).tools.length).toBeGreaterThan(0);
    await next.close();
  });

  it("keeps a session whose client is still connected, while an abandoned one expires", async () => {
    const expired: string[] = [];
    const http = await startHttp({ host: "127.0.0.1", port: 0, sessionTtlMs: 200, newServer, onExpire: (id) => expired.push(id) });
    close = http.close;
    const live = await connect(http.url);
    const gone = await connect(http.url);
    await gone.close();
    // The abandoned one expiring proves the idle time passed; the live one's event stream stays open.
    await vi.waitFor(() => expect(expired).toHaveLength(1), { timeout: 15_000, interval: 50 });
    expect(http.sessionCount()).toBe(1);
    expect((await live.listTools()).tools.length).toBeGreaterThan(0);
    await live.close();
  });
});

describe("originAllowed", () => {
  it("passes no Origin, loopback origins and configured ones; refuses the rest", async () => {
    const { originAllowed } = await import("../../../src/mcp/transports/http.js");
    for (const o of [undefined, "http://localhost:5173", "http://127.0.0.1", "https://[::1]:8443"]) expect(originAllowed(o), String(o)).toBe(true);
    expect(originAllowed("https://app.example", ["https://app.example"])).toBe(true);
    for (const o of ["null", "http://evil.example", "http://localhost.evil.example", "file://localhost", "https://app.example:444", "garbage"]) {
      expect(originAllowed(o, ["https://app.example"]), o).toBe(false);
    }
  });
});
