// Two MCP clients nobody here wrote drive the built server: the MCP Inspector CLI (stdio, and over
// Streamable HTTP), and opencode itself, configured with our server as a local MCP server.
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect } from "../../../src/client/index.js";
import { freePort } from "../../../src/client/spawn.js";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { Client } from "@modelcontextprotocol/client";
import { CLI } from "../../support/mcp-client.js";
import { docSnippet, localize, type Localize } from "../../support/real-clients.js";
import { startOpencode, type TestOpencode } from "../../support/opencode.js";
import { isAlive } from "../../support/registry.js";
import { text, toolCall } from "../../support/scripted-model.js";
import { createSession, promptAndWait } from "../../support/turns.js";
import { scratchEnv } from "../../support/scratch-home.js";

// The `mcp-inspector` bin of @modelcontextprotocol/inspector 0.15.0 imports `commander` without
// declaring it, and here resolves tsup's commander 4 ("allowExcessArguments is not a function").
// `mcp-inspector-cli` is the same code (byte for byte) from the inspector's own CLI package, with
// its dependency declared.
const INSPECTOR = join(process.cwd(), "node_modules", ".bin", "mcp-inspector-cli");
const run = promisify(execFile);

let first: TestOpencode;

beforeAll(async () => {
  first = await startOpencode();
});
afterAll(async () => {
  await first?.stop();
});

/** Runs the inspector CLI; the server's environment goes in `-e KEY=VALUE` flags only. */
async function inspector(target: string[], method: string[], serverEnv: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const flags = Object.entries(serverEnv).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
  const { stdout } = await run(process.execPath, [INSPECTOR, "--cli", ...flags, ...target, ...method], {
    env: { ...scratchEnv() },
    timeout: 60_000,
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}

describe("MCP Inspector CLI", () => {
  const stdio = [process.execPath, CLI];
  const env = () => ({ OPENCODE_URL: first.url, OPENCODE_PASSWORD: first.password });

  it("lists our tools over stdio", async () => {
    const out = await inspector(stdio, ["--method", "tools/list"], env());
    const tools = out.tools as { name: string; annotations?: unknown; outputSchema?: unknown }[];
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["oc_delegate", "oc_wait", "oc_status", "oc_models"]));
    for (const tool of tools) expect(tool.outputSchema, tool.name).toBeDefined();
  });

  it("calls oc_status over stdio against real opencode", async () => {
    const out = await inspector(stdio, ["--method", "tools/call", "--tool-name", "oc_status"], env());
    expect(out.isError ?? false).toBe(false);
    expect((out.structuredContent as { version: string; url: string }).version).toBe("1.18.33");
    expect(JSON.stringify(out)).not.toContain(first.password);
  });

  it("lists our tools over Streamable HTTP (loopback, no token)", async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [CLI, "--http", "--port", String(port)], {
      env: { ...scratchEnv(), ...env() },
      stdio: ["ignore", "ignore", "pipe"],
    });
    const exited = once(child, "exit");
    try {
      let stderr = "";
      await new Promise<void>((resolve, reject) => {
        child.stderr.on("data", (c: Buffer) => {
          stderr += c.toString();
          if (stderr.includes("listening on")) resolve();
        });
        void exited.then(() => reject(new Error(`server exited:\n${stderr}`)));
      });
      const out = await inspector([`http://127.0.0.1:${port}/mcp`], ["--method", "tools/list"]);
      expect((out.tools as { name: string }[]).map((t) => t.name)).toContain("oc_status");
    } finally {
      child.kill("SIGTERM");
      const [code] = await exited;
      expect(code).toBe(0);
    }
  });
});

/** What localize() puts in place of the docs' example values. */
function values(): Localize {
  return { opencodeUrl: first.url, password: first.password, directory: first.directory, stateDir: join(first.root, "state") };
}

// Cursor and Claude Desktop are desktop apps with no headless mode to run here: their snippets are
// checked by launching exactly the command, arguments and environment they declare, as those apps
// would, and talking MCP to it with the SDK's client.
describe.each([
  ["Cursor", "oc_status"],
  ["Claude Desktop", undefined],
] as const)("the %s snippet of docs/clients.md", (heading, call) => {
  it("starts our server, which lists its tools" + (call ? " and answers oc_status from the snippet's opencode" : ""), async () => {
    const entry = (
      JSON.parse(localize(docSnippet(heading, "json"), values(), "json")) as {
        mcpServers: Record<string, { command: string; args: string[]; env: Record<string, string> }>;
      }
    ).mcpServers.opencode!;
    expect([entry.command, ...entry.args]).toEqual([process.execPath, CLI]);
    const transport = new StdioClientTransport({
      command: entry.command,
      args: entry.args,
      env: { ...scratchEnv(), OPENCODE_CONDUCTOR_STATE_DIR: values().stateDir, ...entry.env },
      stderr: "pipe",
    });
    const client = new Client({ name: heading, version: "0" });
    await client.connect(transport);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain("oc_delegate");
      if (call) {
        const r = (await client.callTool({ name: call, arguments: {} })) as { isError?: boolean; structuredContent?: { version?: string } };
        expect(r.isError ?? false).toBe(false);
        expect(r.structuredContent?.version).toBe("1.18.33");
      }
    } finally {
      await client.close();
    }
  });
});

/** Pids of our server processes started with this OPENCODE_URL (by the second opencode). */
function ourServerPids(opencodeUrl: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (!cmdline.includes(CLI)) continue;
      if (readFileSync(`/proc/${entry}/environ`, "utf8").split("\0").includes(`OPENCODE_URL=${opencodeUrl}`)) pids.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return pids;
}

/** Bounded re-check of something no event reports (a non-child process ending, MCP start-up). */
async function eventually(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}

describe("opencode as the MCP client", () => {
  let second: TestOpencode;

  beforeAll(async () => {
    // The "opencode itself" snippet of docs/clients.md, made local (our built CLI, the first opencode).
    const snippet = JSON.parse(localize(docSnippet("opencode itself", "json"), values(), "json")) as { mcp: Record<string, unknown> };
    expect(snippet.mcp.conductor).toMatchObject({ type: "local", command: [process.execPath, CLI] });
    second = await startOpencode({ config: { mcp: snippet.mcp } });
  });
  afterAll(async () => {
    await second?.stop();
  });

  it("shows our server connected and its model sees our tools; a tool call reaches the first opencode", async () => {
    const client = connect({ url: second.url, password: second.password, directory: second.directory });
    // GET /mcp answers once the directory's instance has started its MCP clients (about 3 s here);
    // no event announces that ("mcp.tools.changed" is only for a server's list_changed), so
    // re-read briefly in case it still says "pending".
    let status: Record<string, { status: string; error?: string }> = {};
    await eventually(async () => {
      status = (await client.call("mcp.status")) as typeof status;
      return status.conductor?.status !== "pending";
    }, 30_000);
    expect(status.conductor, JSON.stringify(status)).toEqual({ status: "connected" });

    // opencode's tool-id routes list built-in tools only; the model request shows what the agent gets.
    second.model.queue(toolCall("conductor_oc_status", {}), text("The first server is fine."));
    const session = await createSession(client, "uses conductor");
    const turn = await promptAndWait(client, session.id, "Check the other opencode server");
    expect(turn.answer).toBe("The first server is fine.");

    const [asked, answered] = second.model.requestsFor(session.id).filter((r) => r.kind === "chat");
    const offered = (asked!.body.tools as { function: { name: string } }[]).map((t) => t.function.name);
    expect(offered).toEqual(expect.arrayContaining(["conductor_oc_status", "conductor_oc_delegate", "conductor_oc_wait"]));
    // The tool result opencode fed back to its model came from our server talking to `first`.
    const toolResult = JSON.stringify(answered!.body.messages?.filter((m) => m.role === "tool"));
    expect(toolResult).toContain("opencode 1.18.33 at");
    expect(toolResult).toContain(first.url.replace(/^http:\/\//, ""));
    expect(toolResult).not.toContain(first.password);
  });

  it("our server exits when its opencode client goes away", async () => {
    const pids = ourServerPids(first.url);
    expect(pids.length).toBeGreaterThan(0);
    await second.stop();
    expect(await eventually(() => pids.every((pid) => !isAlive(pid)), 10_000)).toBe(true);
  });
});
