// The events half of the v2 contract: every event kind and `data` field the v2 engine's readers
// name is in the engine's table (v2-event-reads.ts, checked against the readers' source), and the
// table against the event schemas of the 2.x documents in spec/. The pre-release's document types
// every event (the `contentSchema` of its JSON-string event data); 2.0.26's declares the data as
// JSON with no schema (its event schemas live in opencode's TypeScript, not in the document), which
// the test states, so that a document which starts typing them is noticed and checked.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadSpec } from "../../../src/openapi/load-document.js";
import { V2_ROUTE_NAMES } from "../../../src/client/v2/routes.js";
import { V2_EVENT_READERS, V2_EVENT_READS, V2_EVENT_READS_IF_PRESENT, V2_EVENT_READS_UNDOCUMENTED } from "../../../src/core/engine/v2/v2-event-reads.js";
import { checkEventReads, eventDataSchemas } from "../../support/contract/event-contract.js";

const KIND_PREFIXES = ["session.", "form.", "permission."];
const listed = { ...V2_EVENT_READS, ...V2_EVENT_READS_UNDOCUMENTED };
const source = V2_EVENT_READERS.map((file) => [file, readFileSync(file, "utf8")] as const);

describe("the v2 engine's event reads", () => {
  it("lists every event kind its readers name", () => {
    const routes = new Set<string>(V2_ROUTE_NAMES);
    const named = source.flatMap(([file, text]) =>
      [...text.matchAll(/"([a-z]+(?:\.[a-z]+)+)"/g)]
        .map((m) => m[1]!)
        .filter((k) => KIND_PREFIXES.some((p) => k.startsWith(p)) && !routes.has(k))
        .map((kind) => ({ file, kind })),
    );
    expect(named.length).toBeGreaterThan(20);
    expect(named.filter((n) => !(n.kind in listed))).toEqual([]);
  });

  it("lists every data field its readers read", () => {
    const fields = new Set([...Object.values(listed), ...Object.values(V2_EVENT_READS_IF_PRESENT)].flatMap((f) => Object.keys(f)));
    const read = source.flatMap(([file, text]) => [...text.matchAll(/\bdata\.(\w+)/g)].map((m) => ({ file, field: m[1]! })));
    expect(read.length).toBeGreaterThan(20);
    expect(read.filter((r) => !fields.has(r.field))).toEqual([]);
  });

  it("finds each kind and field, with its type, in the pre-release document's event schemas", () => {
    const schemas = eventDataSchemas(loadSpec("spec/v2-b622626/openapi.json"))!;
    expect(schemas.size).toBeGreaterThan(50);
    expect(checkEventReads(schemas, V2_EVENT_READS)).toEqual([]);
    expect(checkEventReads(schemas, V2_EVENT_READS_IF_PRESENT, true)).toEqual([]);
    expect(Object.keys(V2_EVENT_READS_UNDOCUMENTED).filter((k) => schemas.has(k))).toEqual([]);
  });

  it("fails a field the schema lacks and a type it does not have, naming kind and field", () => {
    const schemas = eventDataSchemas(loadSpec("spec/v2-b622626/openapi.json"))!;
    expect(checkEventReads(schemas, { "session.step.ended": { reply: "string", cost: "string" }, "session.nope": {} })).toEqual([
      "session.step.ended: data.reply is not in its schema",
      "session.step.ended: data.cost is number, not string",
      "session.nope: no such event kind",
    ]);
  });

  it("2.0.26's document declares no event kinds: its event data is opaque JSON", () => {
    const doc = loadSpec("spec/v2/openapi.json");
    expect(eventDataSchemas(doc)).toBeUndefined();
    expect(doc.components?.schemas?.V2EventEncoded).toEqual({ type: "string", contentMediaType: "application/json" });
  });
});
