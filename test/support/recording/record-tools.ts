// Records one tool scenario (tool-scenarios.ts): a fresh hermetic opencode, the unrecorded setup,
// then the tool calls through the in-memory MCP server on a recording client, then a read of every
// session the calls named. The calls (tool, arguments, and the status the live run answered) are
// kept in the fixture, so a unit test replays exactly what was recorded and can compare.
import { connect } from "../../../src/client/index.js";
import type { Fixture, RecordedToolCall } from "../fixture.js";
import { memoryMcp } from "../mcp-memory.js";
import type { ToolCall } from "../mcp-client.js";
import { startOpencode, type TestOpencode } from "../opencode.js";
import { createRecorder } from "./fetch.js";
import { MISSING_SESSION } from "./scenarios.js";
import type { ToolScenario } from "./tool-scenarios.js";

const SESSION_ID = /\bses_[0-9A-Za-z]{16,}\b/g;

export async function recordToolScenario(scenario: ToolScenario, scrub: (raw: Fixture, server: TestOpencode, startedAt: number) => Fixture): Promise<Fixture> {
  const server = await startOpencode(scenario.server);
  try {
    const plain = connect({ url: server.url, password: server.password, directory: server.directory });
    const { version } = await plain.call("global.health");
    const setup = (await scenario.setup?.(plain, server)) ?? {};
    const startedAt = Date.now();
    const recorder = createRecorder();
    const recordingStarted = performance.now();
    const client = connect({ url: server.url, password: server.password, directory: server.directory, fetch: recorder.fetch });
    const mcp = await memoryMcp({ client, env: scenario.env });
    const results: ToolCall[] = [];
    const calls: RecordedToolCall[] = [];
    try {
      for (const step of scenario.calls) {
        const args = typeof step.args === "function" ? step.args({ setup, results }) : step.args;
        const atMs = Math.round(performance.now() - recordingStarted);
        const result = await mcp.call(step.tool, args, { timeoutMs: 120_000 });
        const endMs = Math.round(performance.now() - recordingStarted);
        results.push(result);
        const status = typeof result.data.status === "string" ? result.data.status : undefined;
        calls.push({
          atMs,
          endMs,
          tool: step.tool,
          arguments: args,
          recorded: { isError: result.isError, ...(status ? { status } : {}), text: result.text.slice(0, 300) },
        });
      }
    } finally {
      await mcp.close();
    }
    // What opencode recorded of each session the calls named, read once they are over.
    const ids = new Set(JSON.stringify(results.map((r) => r.data)).match(SESSION_ID) ?? []);
    ids.delete(MISSING_SESSION);
    for (const id of ids) {
      await client.call("session.messages", { path: { sessionID: id } }).catch(() => undefined);
      await client.call("session.get", { path: { sessionID: id } }).catch(() => undefined);
    }
    await client.call("session.status");
    return scrub({ scenario: `tools/${scenario.name}`, opencodeVersion: version, calls, interactions: recorder.interactions }, server, startedAt);
  } finally {
    await server.stop();
  }
}
