// src/openapi/spec.ts: bundling and response schemas (other tests validate recorded traffic with these).
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { loadSpec } from "../../src/openapi/load-document.js";
import { bundleSchema, listOperations, responseSchema, type OpenApiDocument } from "../../src/openapi/spec.js";

const spec = loadSpec("spec/openapi.json");
const compile = (schema: object) => new Ajv2020({ strict: false }).compile(schema);

function tinySpec(schemas: Record<string, object>): OpenApiDocument {
  return { openapi: "3.1.0", info: { title: "t", version: "1" }, paths: {}, components: { schemas } };
}

describe("bundleSchema", () => {
  it("copies referenced components transitively into sorted $defs", () => {
    const doc = tinySpec({
      B: { type: "object", properties: { c: { $ref: "#/components/schemas/C" } } },
      C: { type: "string" },
      Unused: { type: "number" },
    });
    const out = bundleSchema(doc, { type: "array", items: { $ref: "#/components/schemas/B" } });
    expect(out).toEqual({
      type: "array",
      items: { $ref: "#/$defs/B" },
      $defs: { B: { type: "object", properties: { c: { $ref: "#/$defs/C" } } }, C: { type: "string" } },
    });
  });

  it("handles self-references and names with JSON pointer escapes", () => {
    const doc = tinySpec({
      "Node-x": { type: "object", properties: { next: { $ref: "#/components/schemas/Node-x" } } },
      "a/b": { type: "string" },
    });
    const out = bundleSchema(doc, { anyOf: [{ $ref: "#/components/schemas/Node-x" }, { $ref: "#/components/schemas/a~1b" }] });
    expect(Object.keys(out.$defs as object)).toEqual(["Node-x", "a/b"]);
    const validate = compile(out);
    expect(validate({ next: { next: {} } })).toBe(true);
    expect(validate("s")).toBe(true);
    expect(validate(1)).toBe(false);
  });

  it("does not modify the spec and rejects refs it cannot bundle", () => {
    const doc = tinySpec({ A: { type: "string" } });
    const before = JSON.stringify(doc);
    bundleSchema(doc, { $ref: "#/components/schemas/A" });
    expect(JSON.stringify(doc)).toBe(before);
    expect(() => bundleSchema(doc, { $ref: "other.json#/A" })).toThrow(/cannot bundle/);
    expect(() => bundleSchema(doc, { $ref: "#/components/schemas/Missing" })).toThrow(/missing/);
  });
});

describe("listOperations", () => {
  it("lists the 188 operations sorted by id", () => {
    const ops = listOperations(spec);
    expect(ops).toHaveLength(188);
    expect(ops.map((o) => o.id)).toEqual(ops.map((o) => o.id).sort());
    // 58 operations on 51 distinct /api paths (v2).
    expect(ops.filter((o) => o.path.startsWith("/api/"))).toHaveLength(58);
  });

  it("resolves $ref parameters and request bodies", () => {
    const doc: OpenApiDocument = {
      openapi: "3.1.0",
      info: { title: "t", version: "1" },
      paths: {
        "/x/{id}": {
          parameters: [{ $ref: "#/components/parameters/Id" }],
          post: { operationId: "x.post", requestBody: { $ref: "#/components/requestBodies/B" }, responses: {} },
        },
      },
      components: {
        parameters: { Id: { name: "id", in: "path", schema: { type: "string" } } },
        requestBodies: { B: { required: true, content: { "application/json": { schema: { type: "object" } } } } },
      },
    };
    const [op] = listOperations(doc);
    expect(op?.parameters).toEqual([{ name: "id", in: "path", required: true, schema: { type: "string" } }]);
    expect(op?.requestBody).toEqual({ required: true, content: [{ contentType: "application/json", schema: { type: "object" } }] });
  });
});

describe("responseSchema", () => {
  it("validates a recorded /global/health answer", () => {
    const schema = responseSchema(spec, "global.health", 200);
    expect(schema).not.toBeNull();
    const validate = compile(schema!);
    expect(validate({ healthy: true, version: "1.18.33" })).toBe(true);
    expect(validate({ healthy: "yes" })).toBe(false);
  });

  it("bundles component refs so the schema stands alone", () => {
    const schema = responseSchema(spec, "session.list", "200")!;
    expect(schema).toMatchObject({ type: "array", items: { $ref: "#/$defs/Session" } });
    expect(compile(schema)([])).toBe(true);
  });

  it("returns null for undocumented statuses or bodiless responses, and throws on unknown ids", () => {
    expect(responseSchema(spec, "global.health", 418)).toBeNull();
    expect(() => responseSchema(spec, "no.such.op", 200)).toThrow(/unknown operationId/);
  });
});
