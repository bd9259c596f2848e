// `npm run demo`: the whole thing offline in one go. Starts the pinned opencode with a scripted
// model (the test harness), starts our MCP server over stdio, and drives it with the MCP SDK's
// Client the way Claude Code or Cursor would, printing every call and answer.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { keepRunningOnClosedPipe } from "../src/closed-pipe.js";
import { startMcp, type McpSession } from "../test/support/mcp-client.js";
import { startOpencode } from "../test/support/opencode.js";
import { text, toolCall } from "../test/support/scripted-model.js";

const dim = (s: string) => `\x1b[2m${s}\x1b[0m`;
const bold = (s: string) => `\x1b[1m${s}\x1b[0m`;

async function show(mcp: McpSession, tool: string, args: Record<string, unknown> = {}) {
  console.log(`\n${bold(`→ ${tool}`)} ${dim(JSON.stringify(args))}`);
  const result = await mcp.call(tool, args, { onprogress: (p) => console.log(dim(`  … ${p.message ?? ""}`)) });
  console.log(result.text.replace(/^/gm, "  "));
  return result;
}

// `npm run demo | head` still runs to its end, so the servers it started are stopped.
keepRunningOnClosedPipe();

console.log(bold("Starting opencode 1.18.33 (offline, scripted model) and the MCP server…"));
const server = await startOpencode({ permission: { bash: "ask" } });
let mcp: McpSession | undefined;
try {
  mcp = await startMcp({ OPENCODE_URL: server.url, OPENCODE_PASSWORD: server.password, OPENCODE_CONDUCTOR_DIRECTORY: server.directory });
  const { tools } = await mcp.client.listTools();
  console.log(`MCP server ready with ${tools.length} tools: ${tools.map((t) => t.name).join(", ")}`);

  await show(mcp, "oc_status");

  const hello = join(server.directory, "hello.txt");
  server.model.queue(toolCall("write", { filePath: hello, content: "Hello from an opencode agent!\n" }), text("Created hello.txt with a greeting."));
  await show(mcp, "oc_delegate", { task: "Create hello.txt with a friendly greeting", permissions: "auto" });
  console.log(dim(`  hello.txt on disk: ${JSON.stringify(readFileSync(hello, "utf8"))}`));

  server.model.queue(
    text("Reviewed: no issues found.", { delayMs: 300 }),
    text("Reviewed: two naming nits.", { delayMs: 300 }),
    text("Reviewed: add a test for errors.", { delayMs: 300 }),
  );
  await show(mcp, "oc_delegate_parallel", { tasks: [{ task: "Review src/a.ts" }, { task: "Review src/b.ts" }, { task: "Review src/c.ts" }], detail: "final" });

  const marker = join(server.directory, "deployed.txt");
  server.model.queue(toolCall("bash", { command: `echo ok > ${marker}`, description: "deploy" }), text("Ran the deploy step."));
  const blocked = await show(mcp, "oc_delegate", { task: "Run the deploy step", permissions: "agent" });
  const request = (blocked.data.pending as { id: string }[] | undefined)?.[0];
  if (!request) throw new Error("expected the agent to wait for a permission");
  await show(mcp, "oc_answer", { request_id: request.id, decision: "once" });
  await show(mcp, "oc_wait", { session_id: blocked.data.session_id });
  console.log(dim(`  deployed.txt on disk: ${JSON.stringify(readFileSync(marker, "utf8"))}`));

  console.log(`\n${bold("Demo finished.")} Add the server to your MCP client: see docs/clients.md.`);
} finally {
  await mcp?.close();
  await server.stop();
}
