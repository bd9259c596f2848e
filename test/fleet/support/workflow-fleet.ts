// What the fleet's workflow suites share: an MCP server started as a user runs it on a machine of
// their own (its opencode, its state dir, the fleet's queue), a crash of one, and the count of the
// scripted model's chats per model (how a test proves a step's model was asked once).
import { join } from "node:path";
import { startMcp, type McpSession } from "../../support/mcp-client.js";
import type { TestOpencode } from "../../support/opencode.js";
import type { ScriptedModel } from "../../support/scripted-model.js";

/** A reviewer's answer that approves, in the structured form the review step parses. */
export const APPROVE = '```json\n{"verdict": "approve", "comments": []}\n```';

/** The MCP servers a suite started and has not killed, to close after it. */
export class FleetMcps {
  readonly open: McpSession[] = [];

  constructor(private readonly redisUrl: () => string) {}

  /** An MCP server of the fleet with the workflows toolset, on `s` and a state dir of its own (`name`). */
  async start(s: TestOpencode, name: string): Promise<McpSession> {
    const m = await startMcp({
      OPENCODE_URL: s.url,
      OPENCODE_PASSWORD: s.password,
      OPENCODE_CONDUCTOR_QUEUE: this.redisUrl(),
      OPENCODE_CONDUCTOR_STATE_DIR: join(s.root, `state-${name}`),
      OPENCODE_CONDUCTOR_TOOLSETS: "workflows",
    });
    this.open.push(m);
    return m;
  }

  /** SIGKILL: no shutdown of any kind, as a crash. */
  async kill(m: McpSession): Promise<void> {
    const gone = new Promise<void>((resolve) => (m.transport.onclose = () => resolve()));
    process.kill(m.transport.pid!, "SIGKILL");
    await gone;
    this.open.splice(this.open.indexOf(m), 1);
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.open.splice(0).map((m) => m.close().catch(() => undefined)));
  }
}

/** How many chat requests the scripted model has had for the model `id`. */
export const chatsOf = (model: ScriptedModel, id: string) => model.requests.filter((r) => r.kind === "chat" && r.model === id).length;
