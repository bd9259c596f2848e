// A command whose reader closes early (`opencode-conductor --help | head -1`, `npm run spec:diff |
// head`) ends quietly: exit 0, no EPIPE stack trace. Each command runs with its stdout (or stderr)
// pipe closed before it writes a byte, so its first write fails. The stdio MCP server keeps serving
// when its stderr reader goes away, and still exits 0 when its client does.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { scratchHome } from "../support/scratch-home.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CLI = `${ROOT}dist/cli.js`;
const TSX = ["--import", "tsx"];

/** Runs `node ...args` with its stdout pipe closed at once; resolves with its exit and what it wrote on stderr. */
async function runIntoClosedStdout(args: string[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: scratchHome() },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout.destroy(); // the reader is gone before the command writes anything
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const [code, signal] = (await once(child, "exit")) as [number | null, NodeJS.Signals | null];
  return { code, signal, stderr };
}

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first.`);
});

describe("a reader that closes early ends the command quietly", () => {
  it.each([
    ["opencode-conductor --help", [CLI, "--help"]],
    ["opencode-conductor --version", [CLI, "--version"]],
    ["opencode-conductor audit", [CLI, "audit"]],
    ["opencode-conductor audit --json", [CLI, "audit", "--json"]],
    ["opencode-conductor queue --help", [CLI, "queue", "--help"]],
    ["opencode-conductor worker --help", [CLI, "worker", "--help"]],
    ["opencode-conductor console --help", [CLI, "console", "--help"]],
    ["npm run spec:diff (a 38 KB diff)", [...TSX, "codegen/spec-diff.ts", "spec/openapi.json", "spec/v2/openapi.json"]],
    ["npm run spec:diff -- --json", [...TSX, "codegen/spec-diff.ts", "spec/openapi.json", "spec/v2/openapi.json", "--json"]],
    ["npm run docs:check", [...TSX, "codegen/tools-doc.ts", "--check"]],
  ])("%s", async (_label, args) => {
    const r = await runIntoClosedStdout(args);
    expect(r.stderr).not.toMatch(/EPIPE|\n\s+at /);
    expect([r.code, r.signal]).toEqual([0, null]);
  });

  it("the stdio MCP server keeps answering when its stderr reader goes away, and exits 0 when its client does", async () => {
    const child = spawn(process.execPath, [CLI], {
      env: { PATH: process.env.PATH ?? "", HOME: scratchHome(), OPENCODE_URL: "http://127.0.0.1:9" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    child.stderr.destroy(); // its start-up line (where to watch its work) now fails with EPIPE
    const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
    const line = new Promise<string>((resolve) => {
      let out = "";
      child.stdout.on("data", (c: Buffer) => {
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
    child.stdin.write(`${JSON.stringify(request)}\n`);
    const died = exited.then(([code, signal]) => Promise.reject(new Error(`the server exited (${code ?? signal}) instead of answering`)));
    expect((JSON.parse(await Promise.race([line, died])) as { result: { serverInfo: { name: string } } }).result.serverInfo.name).toBe("opencode-conductor");
    child.stdin.end();
    expect(await exited).toEqual([0, null]);
  });
});
