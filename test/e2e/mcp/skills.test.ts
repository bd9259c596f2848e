// The delegation skill over MCP (`io.modelcontextprotocol/skills`): the built server lists
// skills/opencode-delegate and serves its SKILL.md byte for byte, to a 2025-11-25 and a 2026-07-28
// client, over stdio and Streamable HTTP, with no install step. Nothing here needs opencode.
import { readFileSync } from "node:fs";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { SkillsClient } from "@modelcontextprotocol/client/ext/skills";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpCli, type HttpCli } from "../../support/http-cli.js";
import { startMcp } from "../../support/mcp-client.js";

const SOURCE = readFileSync(new URL("../../../skills/opencode-delegate/SKILL.md", import.meta.url), "utf8");
const ENV = { OPENCODE_URL: "http://127.0.0.1:9", OPENCODE_PASSWORD: "unused", OPENCODE_CONDUCTOR_AUDIT: "off" };

let http: HttpCli;
beforeAll(async () => {
  http = await startHttpCli(["--port", "0"], ENV);
});
afterAll(async () => {
  http?.child.kill("SIGTERM");
  await http?.exit;
});

async function expectSkill(client: Client) {
  const skills = new SkillsClient(client);
  expect(skills.supported).toBe(true);
  const { skills: listed } = await skills.list();
  expect(listed.map((s) => s.uri)).toEqual(["skill://opencode-delegate/SKILL.md"]);
  expect(listed[0]!.frontmatter).toMatchObject({ name: "opencode-delegate" });
  const file = await skills.read(listed[0]!);
  // The SDK checks the file against the digest and size the listing published.
  expect(file.verified).toBe(true);
  expect(file.text).toBe(SOURCE);
  // The instructions point to it, and a client without the extension reads it as a resource.
  expect(client.getInstructions()).toContain(`resources/read ${listed[0]!.uri}`);
  const read = await client.readResource({ uri: listed[0]!.uri });
  expect((read.contents[0] as { text?: string }).text).toBe(SOURCE);
}

describe.each(["legacy", "modern"] as const)("the delegation skill to a %s client", (era) => {
  it("over stdio", async () => {
    const mcp = await startMcp(ENV, {}, { era });
    try {
      expect(mcp.client.getProtocolEra()).toBe(era);
      await expectSkill(mcp.client);
    } finally {
      await mcp.close();
    }
  });

  it("over Streamable HTTP", async () => {
    const client = new Client({ name: "skills-test", version: "1" }, era === "modern" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {});
    await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
    try {
      expect(client.getProtocolEra()).toBe(era);
      await expectSkill(client);
    } finally {
      await client.close();
    }
  });
});
