// Arguments MCP clients inject on their own (Gemini CLI's `wait_for_previous`) are dropped before a
// tool runs; any other unknown argument is refused with the tool's real arguments, quoting a bounded
// part of what the caller sent. Driven through the SDK's client and server, as a client would call.
import { InMemoryTransport, McpServer } from "@modelcontextprotocol/server";
import { Client } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Config } from "../../../src/config.js";
import type { Conductor } from "../../../src/core/conductor.js";
import { acceptedArguments, CLIENT_INJECTED_ARGUMENTS } from "../../../src/mcp/client-arguments.js";
import { defineTool } from "../../../src/mcp/tool-def.js";
import { registerTool } from "../../../src/mcp/register-tool.js";

const seen: Record<string, unknown>[] = [];
const echo = defineTool({
  name: "oc_echo",
  title: "Echo",
  description: "Returns its arguments.",
  toolset: "discover",
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  input: { text: z.string(), loud: z.boolean().optional() },
  output: { got: z.record(z.string(), z.unknown()) },
  async run(args) {
    seen.push(args);
    return { text: JSON.stringify(args), data: { got: args } };
  },
});

let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  seen.length = 0;
});

async function connect(): Promise<Client> {
  const server = new McpServer({ name: "t", version: "0" });
  registerTool(server, echo, { config: {} as Config, conductor: async () => ({}) as Conductor, secrets: () => [] });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  client = new Client({ name: "gemini-cli-mcp-client", version: "0" });
  await client.connect(b);
  return client;
}

describe("client-injected arguments", () => {
  it("drops wait_for_previous (Gemini CLI) before the tool runs", async () => {
    const c = await connect();
    const result = await c.callTool({ name: "oc_echo", arguments: { text: "hi", wait_for_previous: true } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ got: { text: "hi" } });
    expect(seen).toEqual([{ text: "hi" }]);
  });

  it("still refuses a typo, naming the tool's arguments", async () => {
    const c = await connect();
    const result = await c.callTool({ name: "oc_echo", arguments: { text: "hi", lound: true, wait_for_previous: false } });
    expect(result.isError).toBe(true);
    expect((result.content as Array<{ text: string }>)[0]!.text).toBe("Invalid input to oc_echo: oc_echo does not take `lound`. Its arguments: text, loud.");
    expect(seen).toEqual([]);
  });

  it("quotes at most ~200 characters of bad keys", () => {
    const keys = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`${"x".repeat(5_000)}${i}`, 1]));
    let message = "";
    try {
      acceptedArguments("oc_echo", ["text"], { text: "a", ...keys });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^oc_echo does not take `x+… \(50 unknown arguments\)\. Its arguments: text\.$/);
    expect(message.length).toBeLessThan(300);
  });

  it("says for every tolerated key who sends it and why", () => {
    for (const [key, why] of Object.entries(CLIENT_INJECTED_ARGUMENTS)) {
      expect(key).toMatch(/^[a-z_]+$/);
      expect(why.length).toBeGreaterThan(40);
    }
  });
});
