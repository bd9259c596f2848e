// A start registers this package's tools from built-tools.json and loads each tool's module on its
// first call (src/mcp/lazy-tool.ts): every call is still checked against the full zod input schema,
// exactly as a tool registered from its definition (registerTool) is, and its answer against the
// full output schema.
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { McpServer } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { loadConfig } from "../../../src/config.js";
import { registerLazyTool } from "../../../src/mcp/lazy-tool.js";
import { BUILT_TOOLS } from "../../../src/mcp/listing/built-tools.js";
import { registerTool } from "../../../src/mcp/register-tool.js";
import { ALL_TOOLS } from "../../../src/mcp/tools/index.js";

const config = loadConfig({});
const noConductor = () => Promise.reject(new Error("this test does not reach opencode"));

async function connected(server: McpServer): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "lazy-tool-test", version: "1.0.0" });
  await server.connect(serverSide);
  await client.connect(clientSide);
  return client;
}

/** The same tool on two servers: registered from its definition, and lazily from built-tools.json. */
async function both(name: string) {
  const eager = new McpServer({ name: "eager", version: "1" });
  registerTool(
    eager,
    ALL_TOOLS.find((t) => t.name === name)!,
    { config, conductor: noConductor, secrets: () => [] },
  );
  const lazy = new McpServer({ name: "lazy", version: "1" });
  registerLazyTool(
    lazy,
    BUILT_TOOLS.find((t) => t.name === name)!,
    { config, conductor: noConductor, secrets: () => [] },
  );
  return { eager: await connected(eager), lazy: await connected(lazy) };
}

describe("a tool registered from built-tools.json", () => {
  it("refuses the arguments its zod schema refuses, with the same error as registerTool's", async () => {
    const { eager, lazy } = await both("oc_wait");
    for (const args of [{}, { session_id: 42 }, { session_id: "ses_1", timeout_s: "soon" }, { session_id: "ses_1", detail: "everything" }]) {
      const a = await eager.callTool({ name: "oc_wait", arguments: args });
      const b = await lazy.callTool({ name: "oc_wait", arguments: args });
      expect(a.isError, JSON.stringify(args)).toBe(true);
      expect(b, JSON.stringify(args)).toEqual(a);
    }
  });

  it("runs the tool's own code once its arguments pass, and answers as registerTool's does", async () => {
    const { eager, lazy } = await both("oc_wait");
    const args = { session_id: "ses_1", timeout_s: 1 };
    const a = await eager.callTool({ name: "oc_wait", arguments: args });
    expect(a).toMatchObject({ isError: true });
    expect(JSON.stringify(a)).toContain("this test does not reach opencode");
    expect(await lazy.callTool({ name: "oc_wait", arguments: args })).toEqual(a);
  });

  it("checks each answer against the tool's full output schema (the zod schema registerTool would hand the SDK)", async () => {
    const lazy = new McpServer({ name: "lazy", version: "1" });
    const registered = registerLazyTool(
      lazy,
      BUILT_TOOLS.find((t) => t.name === "oc_wait")!,
      { config, conductor: noConductor, secrets: () => [] },
    );
    const zod = z.looseObject(ALL_TOOLS.find((t) => t.name === "oc_wait")!.output);
    for (const answer of [{ status: 42 }, {}, { status: "done", session_id: "ses_1", extra: true }]) {
      const got = await registered.outputSchema!["~standard"].validate(answer);
      expect(got, JSON.stringify(answer)).toEqual(await zod["~standard"].validate(answer));
    }
    // Once loaded, the JSON Schema the SDK reads of it is the zod schema's own conversion.
    expect(registered.outputSchema!["~standard"].jsonSchema.output({ target: "draft-2020-12" })).toEqual(
      zod["~standard"].jsonSchema.output({ target: "draft-2020-12" }),
    );
  });
});
