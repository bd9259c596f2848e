// The compact tools/list: what it leaves out carries no meaning, what it keeps is the zod truth, and
// the default configuration stays within the context budget every client pays (docs/performance.md).
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { TOOLS_LIST_BUDGET_CHARS } from "../../../src/mcp/listing/budget.js";
import { clientHints, compactSchema } from "../../../src/mcp/listing/compact-listing.js";
import { ALL_TOOLS } from "../../../src/mcp/tools/index.js";
import { listedTools } from "../../../src/mcp/listing/listed-tools.js";
import { clamped } from "../../../src/mcp/shared-fields.js";
import { BUILT_TOOLS } from "../../../src/mcp/listing/built-tools.js";
import { liveTools } from "../../../src/mcp/listing/live-tools.js";
import BUILT from "../../../src/mcp/listing/built-tools.json" with { type: "json" };

describe("compactSchema", () => {
  it("drops $schema, empty objects, string propertyNames and the ±2^53 integer bounds", () => {
    const schema = compactSchema(z.object({ n: z.number().int(), map: z.record(z.string(), z.unknown()), list: z.array(z.unknown()) }), "input");
    expect(schema).toEqual({
      type: "object",
      properties: { n: { type: "integer" }, map: { type: "object" }, list: { type: "array" } },
      required: ["n", "map", "list"],
    });
  });

  it("keeps field names that look like keywords, and drops `required` only from output schemas", () => {
    const shape = { required: z.string(), $schema: z.string(), properties: z.object({}) };
    expect(Object.keys((compactSchema(z.object(shape), "input").properties as object) ?? {})).toEqual(["required", "$schema", "properties"]);
    const output = compactSchema(z.looseObject(shape), "output");
    expect(Object.keys(output.properties as object)).toEqual(["required", "$schema", "properties"]);
    expect(output).not.toHaveProperty("required");
    expect(output).not.toHaveProperty("additionalProperties");
  });

  it("lists a clamped number by its input type", () => {
    expect(compactSchema(z.object({ t: clamped(1, 10).optional() }), "input")).toEqual({ type: "object", properties: { t: { type: "number" } } });
    expect(clamped(1, 10).parse(99)).toBe(10);
    expect(clamped(1, 10).parse(-3)).toBe(1);
    expect(clamped(1, 10, true).safeParse(2.5).success).toBe(false);
  });
});

describe("the tools as the build wrote them (what a start lists and instructs from)", () => {
  it("are today's definitions and conversion of every tool's zod shapes, byte for byte (else: npm run build writes them again)", () => {
    expect(JSON.stringify(BUILT)).toBe(JSON.stringify(liveTools()));
    expect(Object.keys(BUILT)).toEqual(ALL_TOOLS.map((t) => t.name));
  });

  it("carry each definition's name, description, toolset, annotations, guide and read-only mode", () => {
    expect(BUILT_TOOLS.map((t) => t.name)).toEqual(ALL_TOOLS.map((t) => t.name));
    for (const [i, def] of ALL_TOOLS.entries()) {
      const built = BUILT_TOOLS[i]!;
      expect(built.description, def.name).toBe(def.description);
      expect(built.toolset, def.name).toBe(def.toolset);
      expect(built.annotations, def.name).toEqual(def.annotations);
      expect(built.guide, def.name).toEqual(def.guide);
      expect(built.readOnlyMode, def.name).toBe(def.readOnlyMode);
    }
  });
});

describe("tools/list size", () => {
  it(`the default toolsets list within ${TOOLS_LIST_BUDGET_CHARS} characters (npm run bench:schema prints the figures)`, async () => {
    const tools = await listedTools({});
    expect(tools).toHaveLength(16);
    expect(JSON.stringify({ tools }).length).toBeLessThanOrEqual(TOOLS_LIST_BUDGET_CHARS);
  });

  it("lists only the hints a client cannot infer from MCP's defaults, and a client reads them back as defined", async () => {
    const listed = await listedTools({ OPENCODE_CONDUCTOR_TOOLSETS: "all" });
    const delegate = listed.find((t) => t.name === "oc_delegate")!;
    expect(delegate).not.toHaveProperty("annotations");
    expect(listed.find((t) => t.name === "oc_result")!.annotations).toEqual({ readOnlyHint: true, openWorldHint: false });
    for (const def of ALL_TOOLS) {
      const { destructiveHint, idempotentHint, ...always } = def.annotations;
      const expected = def.annotations.readOnlyHint ? always : { ...always, destructiveHint, idempotentHint };
      expect(clientHints(listed.find((t) => t.name === def.name)!.annotations), def.name).toEqual(expected);
    }
  });

  it("leaves titles to the docs: a model reads names and descriptions", async () => {
    for (const tool of await listedTools({ OPENCODE_CONDUCTOR_TOOLSETS: "all" })) expect(tool, tool.name).not.toHaveProperty("title");
  });

  it("carries no SDK noise: no $schema, no execution, no empty additionalProperties", async () => {
    const json = JSON.stringify(await listedTools({ OPENCODE_CONDUCTOR_TOOLSETS: "all" }));
    expect(json).not.toContain("$schema");
    expect(json).not.toContain('"execution"');
    expect(json).not.toContain('"additionalProperties":{}');
  });
});
