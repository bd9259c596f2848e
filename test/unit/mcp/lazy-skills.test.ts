// The delegation skill attached before its catalog is built (src/mcp/lazy-skills.ts) answers every
// skills request, and the opening requests, exactly as the SDK's own catalog attached at start does:
// the same capabilities, templates, listings, files and errors, on both eras. The catalog is built
// on the first request that needs it, once per process, and not by the opening requests.
import { Client, InMemoryTransport, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { lazySkills } from "../../../src/mcp/lazy-skills.js";
import { packageSkills } from "../../../src/mcp/skills.js";

const REQUESTS: [string, Record<string, unknown>][] = [
  ["resources/templates/list", {}],
  ["skills/list", {}],
  ["skills/list", { cursor: "bogus" }],
  ["skills/get", { uri: "skill://opencode-delegate/SKILL.md" }],
  ["skills/get", { uri: "skill://opencode-delegate/./SKILL.md" }],
  ["skills/get", { uri: "skill://nope/SKILL.md" }],
  ["skills/get", {}],
  ["resources/read", { uri: "skill://opencode-delegate/SKILL.md" }],
  ["resources/read", { uri: "skill://opencode-delegate/missing.md" }],
  ["resources/read", { uri: "skill://opencode-delegate" }],
  ["resources/directory/read", { uri: "skill://opencode-delegate" }],
  ["resources/directory/read", { uri: "skill://nope" }],
  ["resources/directory/read", {}],
  ["resources/list", {}],
];

type Era = "legacy" | "modern";

/**
 * Every answer (result or error) of a server with `attach`ed skills, in order, after its capabilities:
 * a legacy client over an in-memory pair, a 2026-07-28 one through the SDK's per-request handler
 * (a server per request, as over HTTP), called in process.
 */
async function answersOf(attach: (server: McpServer) => void, era: Era, first: [string, Record<string, unknown>][] = []): Promise<unknown[]> {
  const newServer = () => {
    const server = new McpServer({ name: "skills-test", version: "1" }, { capabilities: { logging: {} } });
    attach(server);
    return server;
  };
  const client = new Client({ name: "skills-test-client", version: "1" }, era === "modern" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {});
  let server: McpServer | undefined;
  if (era === "modern") {
    const handler = createMcpHandler(newServer);
    await client.connect(new StreamableHTTPClientTransport(new URL("http://in-process/mcp"), { fetch: (url, init) => handler.fetch(new Request(url, init)) }));
  } else {
    server = newServer();
    const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
    await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  }
  try {
    const answers: unknown[] = [client.getServerCapabilities()];
    for (const [method, params] of [...first, ...REQUESTS]) {
      answers.push(
        await client.request({ method, params } as never, z.unknown() as never).then(
          (result) => ({ method, result }),
          (error: Error & { code?: unknown }) => ({ method, error: error.message, code: error.code }),
        ),
      );
    }
    return answers;
  } finally {
    await client.close();
    await server?.close();
  }
}

const sdkCatalog = await packageSkills();

describe.each(["legacy", "modern"] as const)("the lazily built delegation skill, to a %s client", (era) => {
  it("answers every skills request as the SDK's catalog attached at start", async () => {
    const expected = await answersOf((server) => sdkCatalog.attach(server), era);
    // The era is the one meant: a 2026-07-28 listing carries the caching fields, a 2025-11-25 one does not.
    const listing = expected.find((a) => (a as { method?: string }).method === "skills/list") as { result: Record<string, unknown> };
    expect(listing.result.skills).toHaveLength(1);
    expect("cacheScope" in listing.result).toBe(era === "modern");
    expect(JSON.stringify(await answersOf((server) => lazySkills(packageSkills, fail).attach(server), era))).toBe(JSON.stringify(expected));
    // The first request that builds the catalog can be any of them: here a skill read before any listing.
    const first: [string, Record<string, unknown>][] = [["resources/read", { uri: "skill://opencode-delegate/SKILL.md" }]];
    expect(JSON.stringify(await answersOf((server) => lazySkills(packageSkills, fail).attach(server), era, first))).toBe(
      JSON.stringify(await answersOf((server) => sdkCatalog.attach(server), era, first)),
    );
  });
});

describe("the lazily built delegation skill", () => {
  it("builds its catalog on the first request that needs it, once for every server", async () => {
    let built = 0;
    const skills = lazySkills(() => (built++, packageSkills()), fail);
    await answersOf((server) => skills.attach(server), "legacy", []).then(() => expect(built).toBe(1));
    await answersOf((server) => skills.attach(server), "legacy");
    expect(built).toBe(1);
  });

  it("declares itself without building the catalog: the opening requests do not need it", async () => {
    let built = 0;
    const skills = lazySkills(() => (built++, packageSkills()), fail);
    const server = new McpServer({ name: "skills-test", version: "1" });
    skills.attach(server);
    const client = new Client({ name: "skills-test-client", version: "1" });
    const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
    await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
    expect(client.getServerCapabilities()?.extensions).toEqual({ "io.modelcontextprotocol/skills": { directoryRead: true } });
    expect((await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual(["skill://{+path}"]);
    expect(built).toBe(0);
    await client.close();
    await server.close();
  });

  it("says once that a catalog could not be built; its requests fail and resources/list goes on without it", async () => {
    const said: string[] = [];
    const skills = lazySkills(
      () => Promise.reject(new Error("no skills folder")),
      (error) => said.push(error.message),
    );
    const answers = (await answersOf((server) => skills.attach(server), "legacy")) as Array<{ method: string; result?: unknown; error?: string }>;
    expect(said).toEqual(["no skills folder"]);
    expect(answers.find((a) => a.method === "skills/list")?.error).toMatch(/no skills folder/);
    expect(answers.filter((a) => a.method === "resources/list").map((a) => a.result)).toEqual([{ resources: [] }]);
  });
});

function fail(error: Error): never {
  throw error;
}
