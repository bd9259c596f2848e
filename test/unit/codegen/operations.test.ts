// generated/operations.ts: complete, consistent with the spec, and every schema usable by Ajv alone.
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { describe, expect, it } from "vitest";
import { operationRow } from "../../../src/openapi/operation-row.js";
import { loadSpec } from "../../../src/openapi/load-document.js";
import { listOperations } from "../../../src/openapi/spec.js";
import { operations, specInfo, type OperationId } from "../../../generated/operations.js";

// ajv-formats is CommonJS: under NodeNext its plugin may sit on `.default`.
const addFormats = (addFormatsModule.default ?? addFormatsModule) as unknown as typeof addFormatsModule.default;

// Schemas without `$id` are never registered, so a `$ref` resolves only inside its own schema:
// one shared instance still proves each schema stands alone, and is much faster than one each.
const ajv = new Ajv2020({ strict: false });
addFormats(ajv);
const compile = (schema: object) => ajv.compile(schema);

const spec = loadSpec("spec/openapi.json");

describe("generated/operations.ts", () => {
  it("has all 188 operations, sorted by id", () => {
    const ids = Object.keys(operations);
    expect(ids).toHaveLength(188);
    expect(ids).toEqual([...ids].sort((a, b) => (a < b ? -1 : 1)));
    expect(specInfo.operationCount).toBe(188);
    expect(specInfo.opencodeVersion).toBe("1.18.33");
    for (const [id, op] of Object.entries(operations)) expect(op.id).toBe(id);
  });

  it("holds exactly what the codegen library computes from the spec", () => {
    // Round trip through the TypeScript writer: nothing lost or mangled in escaping.
    const expected = Object.fromEntries(listOperations(spec).map((op) => [op.id, operationRow(spec, op)]));
    expect(JSON.parse(JSON.stringify(operations))).toEqual(expected);
  });

  it("compiles every path, query and body schema with Ajv2020 on its own", () => {
    // Many operations share a schema (e.g. the {directory, workspace} query): compile each once.
    const unique = new Map<string, string>();
    for (const op of Object.values(operations)) {
      for (const schema of [op.pathParams, op.query, op.body]) {
        if (schema) unique.set(JSON.stringify(schema), op.id);
      }
    }
    expect(unique.size).toBeGreaterThan(50);
    for (const [text, id] of unique) {
      expect(text, id).not.toContain("#/components/");
      expect(() => compile(JSON.parse(text) as object), id).not.toThrow();
    }
  });

  it("validates a real session.prompt body and rejects one without parts", () => {
    const op = operations["session.prompt"];
    // opencode marks request bodies required only on v2 routes; bodyRequired mirrors the spec.
    expect(op.bodyRequired).toBe(false);
    expect(operations["v2.session.prompt"].bodyRequired).toBe(true);
    const validate = compile(op.body!);
    const body = { model: { providerID: "fake", modelID: "scripted" }, parts: [{ type: "text", text: "hi" }] };
    expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ model: body.model })).toBe(false);
    expect(validate.errors?.some((e) => e.keyword === "required" && e.params.missingProperty === "parts")).toBe(true);
  });

  it("requires path params and lists only required query params as required", () => {
    const get = operations["session.get"];
    expect(get.pathParams).toMatchObject({ required: ["sessionID"], additionalProperties: false });
    expect(compile(get.pathParams!)({})).toBe(false);
    expect((operations["session.list"].query as { required: string[] }).required).toEqual([]);
  });

  it.each<[OperationId, boolean, boolean]>([
    ["session.list", true, false],
    ["session.create", false, false],
    ["global.event", true, true],
  ])("%s: readOnly=%s streaming=%s", (id, readOnly, streaming) => {
    expect(operations[id]).toMatchObject({ readOnly, streaming });
  });

  it("flags exactly the WebSocket routes, which the spec describes only in prose", () => {
    expect(
      Object.values(operations)
        .filter((op) => op.websocket)
        .map((op) => op.id)
        .sort(),
    ).toEqual(["pty.connect", "v2.pty.connect"]);
  });

  it("summarises responses", () => {
    expect(operations["session.list"].responses[0]).toEqual({
      status: "200",
      description: expect.any(String),
      contentType: "application/json",
      schema: "Session[]",
    });
    expect(operations["global.event"].responses[0]?.contentType).toBe("text/event-stream");
  });
});
