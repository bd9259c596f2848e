// What the real-client tests (test/e2e-clients) share: the client CLIs from npm (pinned, in the tool
// cache), a temp HOME per run, the snippets of docs/clients.md made runnable here (our built CLI
// instead of `npx -y opencode-conductor`, the test's opencode URL and password instead of the
// examples'), and running a client command with a ceiling, its whole process group killed after.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CLI } from "./mcp-client.js";
import { registerPid, registerRoot, unregisterPid, unregisterRoot } from "./registry.js";
import { npmInstalled } from "./tool-cache.js";
import type { ClientPlan } from "./llm-api/script.js";

export const CLIENTS = {
  claude: { spec: "@anthropic-ai/claude-code@2.1.332", bin: "claude" },
  codex: { spec: "@openai/codex@0.171.0", bin: "codex" },
  gemini: { spec: "@google/gemini-cli@0.61.0", bin: "gemini" },
} as const;

/** The client's executable, installed into the tool cache on first use. */
export async function clientBin(name: keyof typeof CLIENTS): Promise<string> {
  const c = CLIENTS[name];
  return join(await npmInstalled(c.spec), "node_modules", ".bin", c.bin);
}

/** A fresh HOME (with XDG dirs inside it) that the client may write to; removeHome() deletes it. */
export async function tempHome(): Promise<string> {
  const home = await realpath(await mkdtemp(join(tmpdir(), "occ-client-home-")));
  registerRoot(home);
  for (const d of [".config", ".local/share", ".local/state", ".cache"]) await mkdir(join(home, d), { recursive: true });
  return home;
}

export async function removeHome(home: string): Promise<void> {
  await rm(home, { recursive: true, force: true, maxRetries: 3 });
  unregisterRoot(home);
}

/** The environment a client runs in: only PATH from ours, everything else the test's. */
export function clientEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "",
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_DATA_HOME: join(home, ".local/share"),
    XDG_STATE_HOME: join(home, ".local/state"),
    XDG_CACHE_HOME: join(home, ".cache"),
    // Its own temp folder too: two Claude Code processes sharing one /tmp trip over each other.
    TMPDIR: join(home, ".cache"),
    TERM: "dumb",
    NO_COLOR: "1",
    CI: "1",
    ...extra,
  };
}

const CLIENTS_DOC = new URL("../../docs/clients.md", import.meta.url);

/**
 * The code block under a docs/clients.md heading, with `marker` (e.g. "```sh") choosing among
 * several: the n-th block of that kind under the heading (0-based).
 */
export function docSnippet(heading: string, kind = "sh", nth = 0): string {
  const doc = readFileSync(CLIENTS_DOC, "utf8");
  const start = doc.split("\n").findIndex((l) => /^#{2,4} /.test(l) && l.replace(/^#+ /, "").trim() === heading);
  if (start < 0) throw new Error(`docs/clients.md has no heading "${heading}"`);
  const rest = doc.split("\n").slice(start + 1);
  const end = rest.findIndex((l) => /^#{2,4} /.test(l));
  const section = (end < 0 ? rest : rest.slice(0, end)).join("\n");
  const blocks = [...section.matchAll(new RegExp("```" + kind + "\\n([\\s\\S]*?)```", "g"))].map((m) => m[1]!);
  const block = blocks[nth];
  if (block === undefined) throw new Error(`docs/clients.md "${heading}" has no ${kind} block #${nth}`);
  return block;
}

/** The examples' values in the docs, and what a test runs instead. */
export interface Localize {
  opencodeUrl: string;
  password: string;
  directory: string;
  stateDir: string;
  /** For HTTP snippets. */
  mcpUrl?: string;
  token?: string;
  /** For stdio snippets: a file that records the JSON-RPC traffic (test/support/wiretap.mjs). */
  tap?: string;
}

const WIRETAP = fileURLToPath(new URL("./wiretap.mjs", import.meta.url));

/** The JSON-RPC messages a tapped run recorded, oldest first. */
export function tapped(log: string): Array<{ at: number; from: "client" | "server"; message: Record<string, unknown> }> {
  if (!existsSync(log)) return [];
  return readFileSync(log, "utf8")
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

type Rpc = { method?: string; params?: { _meta?: Record<string, unknown> } };

/**
 * What a client's own requests say about the era it negotiated: the methods it sent and the
 * protocol revisions its 2026-07-28 envelopes carry (`io.modelcontextprotocol/protocolVersion`).
 */
export function negotiation(messages: unknown[]): { methods: string[]; versions: string[] } {
  const rpcs = messages.flatMap((m) => (Array.isArray(m) ? m : [m])) as Rpc[];
  const methods = rpcs.flatMap((r) => (typeof r.method === "string" ? [r.method] : []));
  const versions = rpcs.flatMap((r) => {
    const v = r.params?._meta?.["io.modelcontextprotocol/protocolVersion"];
    return typeof v === "string" ? [v] : [];
  });
  return { methods, versions: [...new Set(versions)] };
}

/** The revision a 2025-11-25-era client opened with: what our server answered to its `initialize`. */
export function initializedVersion(traffic: ReturnType<typeof tapped>): string | undefined {
  const id = traffic.find((m) => m.from === "client" && m.message.method === "initialize")?.message.id;
  const answer = traffic.find((m) => m.from === "server" && m.message.id === id && m.message.result);
  return (answer?.message.result as { protocolVersion?: string } | undefined)?.protocolVersion;
}

/** A docs snippet made runnable here: our built CLI for npx, the test's opencode for the examples'. */
export function localize(snippet: string, l: Localize, quoting: "shell" | "json" | "toml" = "shell"): string {
  const node = process.execPath;
  const launcher = quoting === "shell" ? (l.tap ? `${node} ${WIRETAP} ${l.tap} ${node} ${CLI}` : `${node} ${CLI}`) : undefined;
  let out = snippet;
  if (launcher) out = out.replaceAll("npx -y opencode-conductor", launcher);
  else {
    // JSON / TOML: `"command": "npx", "args": ["-y", "opencode-conductor"]` and the TOML equivalent;
    // opencode's own `"command": ["npx", "-y", "opencode-conductor"]`.
    // Through the wiretap when the test reads the traffic: node wiretap.mjs LOG node CLI.
    const args = (l.tap ? [WIRETAP, l.tap, node, CLI] : [CLI]).map((a) => JSON.stringify(a)).join(", ");
    out = out.replace(/\[\s*"npx",\s*"-y",\s*"opencode-conductor"\s*\]/g, `[${JSON.stringify(node)}, ${args}]`);
    out = out.replace(/("command"\s*:\s*|command\s*=\s*)"npx"/g, `$1${JSON.stringify(node)}`);
    out = out.replace(/\[\s*"-y",\s*"opencode-conductor"\s*\]/g, `[${args}]`);
  }
  out = out.replaceAll("http://127.0.0.1:4096", l.opencodeUrl).replaceAll("/absolute/path/to/project", l.directory).replaceAll("secret", l.password);
  if (l.mcpUrl) out = out.replaceAll("http://127.0.0.1:8765/mcp", l.mcpUrl);
  if (l.token) out = out.replaceAll("YOUR_TOKEN", l.token);
  return out;
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs a client command; on the ceiling its process group is killed and the result says so. */
export async function run(
  command: string,
  args: string[],
  o: { env: Record<string, string>; cwd: string; timeoutMs?: number; input?: string },
): Promise<RunResult> {
  const started = Date.now();
  const child = spawn(command, args, { env: o.env, cwd: o.cwd, detached: true, stdio: ["pipe", "pipe", "pipe"] });
  registerPid(child.pid!, command.split("/").at(-1)!);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
  child.stdin!.end(o.input ?? "");
  const timer = setTimeout(() => {
    stderr += `\n[test] killed after ${o.timeoutMs} ms`;
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // already gone
    }
  }, o.timeoutMs ?? 180_000);
  const [code] = (await once(child, "exit")) as [number | null];
  clearTimeout(timer);
  // What the client started (its MCP server child among them) goes with it.
  try {
    process.kill(-child.pid!, "SIGKILL");
  } catch {
    // the group is empty
  }
  unregisterPid(child.pid!);
  return { code, stdout, stderr, ms: Date.now() - started };
}

/** A shell command line from a docs snippet, split the way sh would for these simple lines. */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (const m of line.matchAll(re)) words.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, "$1") : (m[2] ?? m[3]!));
  return words;
}

/** The plan every client's model follows: check the server, delegate writing `file`, report. */
export function delegatePlan(file: string, content: string): ClientPlan {
  return {
    calls: [
      { tool: "oc_status", args: {} },
      { tool: "oc_delegate", args: { task: `Create the file ${file} containing "${content}".`, timeout_s: 120 } },
    ],
    finalText: `The opencode agent wrote ${file}.`,
  };
}
