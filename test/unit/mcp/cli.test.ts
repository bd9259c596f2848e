// The `opencode-conductor` bin (built dist/cli.js): flags, exit codes, bad configuration, and a
// clean exit when its client goes away. No opencode is needed: nothing here makes a tool call.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { hostAllowed, isLoopback } from "../../../src/mcp/transports/http.js";
import { VERSION } from "../../../src/version.js";
import { startHttpCli } from "../../support/http-cli.js";
import { scratchEnv } from "../../support/scratch-home.js";

const CLI = fileURLToPath(new URL("../../../dist/cli.js", import.meta.url));

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the bin to its end with a minimal environment; stdin is closed at once. */
async function runCli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...scratchEnv(), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const [code, signal] = (await once(child, "exit")) as [number | null, NodeJS.Signals | null];
  return { code, signal, stdout, stderr };
}

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first.`);
});

describe("opencode-conductor flags", () => {
  it("--help prints usage and exits 0", async () => {
    for (const flag of ["--help", "-h"]) {
      const r = await runCli([flag]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("Usage:");
      expect(r.stdout).toContain("--http");
      expect(r.stdout).toContain("OPENCODE_URL");
      // Every variable of the README's configuration table (MODEL_BLOCK is written "MODEL_ALLOW/_BLOCK").
      for (const name of [
        "OPENCODE_PASSWORD",
        "TOOLSETS",
        "READ_ONLY",
        "_MODEL ",
        "FALLBACK",
        "RETRY_TIMEOUT_S",
        "MODEL_ALLOW/_BLOCK",
        "INSTANCE_TTL_S",
        "STATE_DIR",
        "SANDBOX",
        "AUDIT",
        "AUDIT_REQUIRED",
        "ROTATE_MB/_KEEP",
        "HTTP_TOKEN",
      ]) {
        expect(r.stdout, name).toContain(name);
      }
    }
  });

  it("--version prints the package version", async () => {
    for (const flag of ["--version", "-v"]) {
      const r = await runCli([flag]);
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toBe(VERSION);
    }
    expect(VERSION).toMatch(/^\d+\.\d+\.\d+/);
  });

  it.each([
    [["--bogus"], /bogus/],
    [["serve"], /serve/],
    [["--port", "9000"], /only apply with --http/],
    [["--token", "abcdefghijklmnop"], /only apply with --http/],
    [["--http", "--token", " "], /--token needs a value/],
    [["--http", "--port", "abc"], /--port must be a port number/],
    [["--http", "--port", "70000"], /--port must be a port number/],
  ])("%j exits 2 with a message", async (args, message) => {
    const r = await runCli(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe(""); // stdout belongs to the MCP protocol
  });

  it("exits 2 on bad configuration, naming the variable", async () => {
    const r = await runCli([], { OPENCODE_CONDUCTOR_TOOLSETS: "foo" });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("OPENCODE_CONDUCTOR_TOOLSETS");
    expect(r.stderr).toContain('"foo"');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stdout).toBe("");
    const url = await runCli(["--http"], { OPENCODE_URL: "localhost:4096" });
    expect(url.code).toBe(2);
    expect(url.stderr).toContain("OPENCODE_URL");
  });

  it("exits 2 when the toolsets and read-only mode leave no tools", async () => {
    const r = await runCli([], { OPENCODE_CONDUCTOR_TOOLSETS: "instances", OPENCODE_CONDUCTOR_READ_ONLY: "1" });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("OPENCODE_CONDUCTOR_TOOLSETS=instances with OPENCODE_CONDUCTOR_READ_ONLY=1 leaves no tools");
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});

describe("the stdio server's lifetime", () => {
  function startStdio() {
    // A closed port: the server must not need opencode to start, answer initialize, or exit.
    const child = spawn(process.execPath, [CLI], {
      env: { ...scratchEnv(), OPENCODE_URL: "http://127.0.0.1:9" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
    return { child, exited };
  }

  /** Sends one JSON-RPC initialize line and resolves with the first line the server writes. */
  async function initialize(child: ReturnType<typeof startStdio>["child"]): Promise<Record<string, unknown>> {
    const line = new Promise<string>((resolve) => {
      let out = "";
      child.stdout!.on("data", (c: Buffer) => {
        out += c.toString();
        if (out.includes("\n")) resolve(out.slice(0, out.indexOf("\n")));
      });
    });
    const request = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "unit", version: "1" } },
    };
    child.stdin!.write(`${JSON.stringify(request)}\n`);
    return JSON.parse(await line) as Record<string, unknown>;
  }

  it("exits 0 when stdin closes", async () => {
    const { child, exited } = startStdio();
    const answer = await initialize(child);
    expect((answer.result as { serverInfo: { name: string } }).serverInfo.name).toBe("opencode-conductor");
    child.stdin!.end();
    expect(await exited).toEqual([0, null]);
  });

  it("keeps answering when its stderr reader goes away, and exits 0 when its client does", async () => {
    const { child, exited } = startStdio();
    child.stderr!.destroy(); // its start-up line (where to watch its work) now fails with EPIPE
    const answer = await initialize(child);
    expect((answer.result as { serverInfo: { name: string } }).serverInfo.name).toBe("opencode-conductor");
    child.stdin!.end();
    expect(await exited).toEqual([0, null]);
  });

  it("exits 0 on SIGTERM", async () => {
    const { child, exited } = startStdio();
    await initialize(child);
    child.kill("SIGTERM");
    expect(await exited).toEqual([0, null]);
  });
});

describe("--http --token", () => {
  const TOKEN = "flag-token-0123456789abcdef";
  const initialize = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "unit", version: "1" } },
  });
  const post = (url: string, authorization?: string) =>
    fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...(authorization ? { authorization } : {}) },
      body: initialize,
    });

  it("is the bearer token clients must send, in place of OPENCODE_CONDUCTOR_HTTP_TOKEN, and is never printed", async () => {
    // The variable is set too: the flag replaces it.
    const cli = await startHttpCli(["--port", "0", "--token", TOKEN], {
      OPENCODE_URL: "http://127.0.0.1:9",
      OPENCODE_CONDUCTOR_HTTP_TOKEN: "the-variable-token-0123",
    });
    try {
      expect((await post(cli.url)).status).toBe(401);
      expect((await post(cli.url, "Bearer the-variable-token-0123")).status).toBe(401);
      const ok = await post(cli.url, `Bearer ${TOKEN}`);
      expect(ok.status).toBe(200);
      expect(await ok.text()).toContain("opencode-conductor");
    } finally {
      cli.child.kill("SIGTERM");
      await cli.exit;
    }
    expect(cli.stderr()).toContain("listening on");
    expect(cli.stderr()).not.toContain(TOKEN);
  });

  it("lets a server listen off loopback, where a token is required", async () => {
    const cli = await startHttpCli(["--host", "0.0.0.0", "--port", "0", "--token", TOKEN], { OPENCODE_URL: "http://127.0.0.1:9" });
    try {
      expect((await post(`http://127.0.0.1:${cli.port}/mcp`)).status).toBe(401);
      expect((await post(`http://127.0.0.1:${cli.port}/mcp`, `Bearer ${TOKEN}`)).status).toBe(200);
    } finally {
      cli.child.kill("SIGTERM");
      await cli.exit;
    }
    const refused = await runCli(["--http", "--host", "0.0.0.0", "--port", "0"], { OPENCODE_URL: "http://127.0.0.1:9" });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("set OPENCODE_CONDUCTOR_HTTP_TOKEN (or pass --token)");
  });
});

describe("HTTP host rules", () => {
  it("knows loopback addresses, and not names that merely start with 127.", () => {
    for (const h of ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]"]) expect(isLoopback(h), h).toBe(true);
    for (const h of ["0.0.0.0", "192.168.1.5", "127.0.0.1.evil.example", "127.evil", "::"]) expect(isLoopback(h), h).toBe(false);
  });

  it("on a loopback bind, accepts only loopback Host headers (DNS rebinding)", () => {
    for (const h of ["127.0.0.1:8765", "localhost:8765", "[::1]:8765", "127.0.0.1"]) expect(hostAllowed(h, "127.0.0.1"), h).toBe(true);
    for (const h of [undefined, "", "evil.example:8765", "127.0.0.1.evil.example:8765", "localhost.evil.example"])
      expect(hostAllowed(h, "127.0.0.1"), String(h)).toBe(false);
  });

  it("off loopback, leaves Host alone: the required token is the guard", () => {
    expect(hostAllowed("192.168.1.5:8765", "0.0.0.0")).toBe(true);
    expect(hostAllowed("my-box.lan:8765", "0.0.0.0")).toBe(true);
  });
});

describe("opencode-conductor audit", () => {
  it("prints the trail for people, filtered, and refuses unknown flags", async () => {
    const { mkdtempSync, writeFileSync, rmSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const dir = mkdtempSync(join(tmpdir(), "occ-audit-cli-"));
    try {
      const file = join(dir, "audit.jsonl");
      const lines = [
        {
          time: "2026-01-01T00:00:00.000Z",
          tool: "oc_delegate",
          outcome: "done",
          session_id: "ses_a",
          model: "fake/scripted",
          prompt: { sha256: "x", length: 3, first_line: "fix it" },
        },
        { time: "2026-01-02T00:00:00.000Z", tool: "oc_answer", outcome: "ok", session_id: "ses_a", decision: "once", by: "human" },
      ];
      writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
      const all = await runCli(["audit"], { OPENCODE_CONDUCTOR_AUDIT: file });
      expect(all.code).toBe(0);
      expect(all.stdout).toContain("oc_delegate");
      expect(all.stdout).toContain('"fix it"');
      expect(all.stdout).toContain("decision=once by human");
      const answers = await runCli(["audit", "--tool", "oc_answer", "--json"], { OPENCODE_CONDUCTOR_AUDIT: file });
      expect((JSON.parse(answers.stdout) as Array<{ tool: string }>).map((e) => e.tool)).toEqual(["oc_answer"]);
      const none = await runCli(["audit", "--tool", "oc_nothing", "--json"], { OPENCODE_CONDUCTOR_AUDIT: file });
      expect(none.code).toBe(0);
      expect(JSON.parse(none.stdout)).toEqual([]);
      const since = await runCli(["audit", "--since", "2026-01-01T12:00:00Z", "--json"], { OPENCODE_CONDUCTOR_AUDIT: file });
      expect((JSON.parse(since.stdout) as Array<{ tool: string }>).map((e) => e.tool)).toEqual(["oc_answer"]);
      for (const value of ["yesterday", "1", "x".repeat(5_000)]) {
        const refused = await runCli(["audit", "--since", value], { OPENCODE_CONDUCTOR_AUDIT: file });
        expect(refused.code).toBe(2);
        expect(refused.stderr).toContain("is not a time: give an ISO date or time");
        expect(refused.stderr.length).toBeLessThan(400);
      }
      // A page at a time: stderr says how to go on, and --before does.
      const newest = await runCli(["audit", "--limit", "1", "--json"], { OPENCODE_CONDUCTOR_AUDIT: file });
      expect((JSON.parse(newest.stdout) as Array<{ tool: string }>).map((e) => e.tool)).toEqual(["oc_answer"]);
      const more = /^Older entries may match: opencode-conductor audit --limit 1 --json --before (\S+)$/m.exec(newest.stderr);
      expect(more, newest.stderr).not.toBeNull();
      const older = await runCli(["audit", "--limit", "1", "--json", "--before", more![1]!], { OPENCODE_CONDUCTOR_AUDIT: file });
      expect((JSON.parse(older.stdout) as Array<{ tool: string }>).map((e) => e.tool)).toEqual(["oc_delegate"]);
      const lost = await runCli(["audit", "--before", "nonsense"], { OPENCODE_CONDUCTOR_AUDIT: file });
      expect(lost.code).toBe(2);
      expect(lost.stderr).toContain('--before "nonsense" is not a cursor');
      const bad = await runCli(["audit", "--bogus"], { OPENCODE_CONDUCTOR_AUDIT: file });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("Usage: opencode-conductor audit");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("auditTime", () => {
  it("reads ISO dates and times and ages (30m, 2h, 7d), and refuses the rest", async () => {
    const { auditTime } = await import("../../../src/core/governance/audit-time.js");
    const now = Date.parse("2026-11-30T12:00:00Z");
    expect(auditTime("--since", "2026-11-29", now)).toBe(Date.parse("2026-11-29"));
    expect(auditTime("--since", "2026-11-29T18:00:00Z", now)).toBe(Date.parse("2026-11-29T18:00:00Z"));
    expect(auditTime("--since", "2h", now)).toBe(now - 7_200_000);
    expect(auditTime("--since", "7d", now)).toBe(now - 7 * 86_400_000);
    expect(auditTime("--since", now - 5, now)).toBe(now - 5);
    for (const bad of ["yesterday", "1", "2026-13-45", "March 3", Number.NaN])
      expect(() => auditTime("--since", bad, now)).toThrow(/^--since .* is not a time: give an ISO date or time/);
  });
});
