// oc_status: schema and a recorded status read: version, health, counts and the compatibility
// verdict, each as opencode answered (health, config, agents, commands, its /doc spec).
import { describe, expect, it } from "vitest";
import { describeRecordedCalls } from "../../support/tool-replay.js";
import { expectToolsnap, listedTool } from "../../support/toolsnaps.js";
import { clientHints } from "../../../src/mcp/listing/compact-listing.js";

const TOOL = "oc_status";

describe(`${TOOL} schema`, () => {
  it("matches its snapshot", async () => expectToolsnap(await listedTool(TOOL)));

  it("takes only optional fields; read-only", async () => {
    const tool = await listedTool(TOOL);
    expect(tool.inputSchema.required ?? []).toEqual([]);
    expect(Object.keys(tool.inputSchema.properties!)).toEqual(["directory", "spec_ops"]);
    expect(clientHints(tool.annotations)).toMatchObject({ readOnlyHint: true });
  });
});

describeRecordedCalls(TOOL, [
  {
    scenario: "status",
    call: 0,
    answer: "ok",
    check: (r, { fixture }) => {
      const agents = fixture.interactions.find((i) => i.operationId === "app.agents")!.body as unknown[];
      expect(r.data).toMatchObject({
        version: "1.18.33",
        healthy: true,
        default_model: "fake/scripted",
        counts: { providers: 1, models: 2, agents: agents.length },
      });
      expect(r.data.compatibility).toMatchObject({ verdict: expect.stringMatching(/^tested/) });
      expect(r.data.engine).toBe("v1");
      expect(r.text).toMatch(/^opencode 1\.18\.33 at http:\/\/opencode\.replay\.invalid \(engine v1\): healthy\./);
      expect(r.text).toContain("Its spec is the pinned one (1.18.33).");
    },
  },
]);
