// The server instructions come from the tool definitions: a server tells its client about the
// tools it lists and no others (toolsets, read-only mode), and every default tool is named.
import { describe, expect, it } from "vitest";
import { DEFAULT_TOOLSETS } from "../../../src/config.js";
import { SKILL_URI } from "../../../src/mcp/instructions.js";
import { INSTRUCTIONS } from "../../../src/mcp/server.js";
import { ALL_TOOLS } from "../../../src/mcp/tools/index.js";
import { useNoOpencode } from "../../support/tool-replay.js";

const none = useNoOpencode();
const instructionsOf = async (env: Record<string, string>) => (await none.mcp({ env })).client.getInstructions() ?? "";

describe("server instructions", () => {
  it("name every tool of the default toolsets, then the shared fields", () => {
    for (const tool of ALL_TOOLS.filter((t) => DEFAULT_TOOLSETS.includes(t.toolset))) expect(INSTRUCTIONS, tool.name).toContain(tool.name);
    expect(INSTRUCTIONS.split("\n").at(-1)).toMatch(/^Shared fields: directory is/);
  });

  it("are what a default server sends at initialize; one without the delegation skill does not point to it", async () => {
    const sent = await instructionsOf({ OPENCODE_CONDUCTOR_TOOLSETS: DEFAULT_TOOLSETS.join(",") });
    expect(INSTRUCTIONS).toContain(`resources/read ${SKILL_URI}`);
    expect(sent).not.toContain(SKILL_URI);
    expect(sent).toBe(
      INSTRUCTIONS.split("\n")
        .filter((line) => !line.includes(SKILL_URI))
        .join("\n"),
    );
  });

  it("leave out the tools a server does not list", async () => {
    const readOnly = await instructionsOf({ OPENCODE_CONDUCTOR_READ_ONLY: "1", OPENCODE_CONDUCTOR_TOOLSETS: "discover,sessions" });
    expect(readOnly).toContain("oc_status / oc_models / oc_catalog describe the server.");
    expect(readOnly).not.toContain("oc_delegate");
    expect(readOnly).not.toContain("oc_send");
    expect(readOnly).not.toContain("oc_answer");
  });
});
