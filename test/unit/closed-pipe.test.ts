// A command whose reader closes early (`opencode-conductor --help | head -1`, `npm run spec:diff |
// head`) ends quietly: exit 0, no EPIPE stack trace. Each command runs with its stdout pipe closed
// before it writes a byte, so its first write fails. (The stdio MCP server, which keeps serving when
// its stderr reader goes away: test/unit/mcp/cli.test.ts.)
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { scratchEnv } from "../support/scratch-home.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CLI = `${ROOT}dist/cli.js`;
const TSX = ["--import", "tsx"];

/** Runs `node ...args` with its stdout pipe closed at once; resolves with its exit and what it wrote on stderr. */
async function runIntoClosedStdout(args: string[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...scratchEnv() },
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
});
