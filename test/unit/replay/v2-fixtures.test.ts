// The 2.x recordings (`npm run record -- --v2`) against the document their server serves: every
// JSON body matches its operation's response schema, every event matches the V2Event union, the
// v2 event parser reads every event, and each turn ends with the outcome event the scenario expects.
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { describe, expect, it } from "vitest";
import { loadSpec } from "../../../src/openapi/load-document.js";
import { bundleSchema, responseSchema } from "../../../src/openapi/spec.js";
import { parseV2Event, sessionOf } from "../../../src/client/v2/event-framing.js";
import { isEventStream, loadV2Fixture, V2_SCENARIOS, type Fixture } from "../../support/fixture.js";

const addFormats = (addFormatsModule.default ?? addFormatsModule) as unknown as typeof addFormatsModule.default;
const ajv = new Ajv2020({ strict: false });
addFormats(ajv);
const spec = loadSpec("spec/v2-b622626/openapi.json");
const validateEvent = ajv.compile(bundleSchema(spec, { $ref: "#/components/schemas/V2Event" }));

const OUTCOME: Record<(typeof V2_SCENARIOS)[number], string> = {
  "text-turn": "session.execution.succeeded",
  "write-turn": "session.execution.succeeded",
  "http-400": "session.execution.failed",
  interrupt: "session.execution.interrupted",
  permission: "session.execution.succeeded",
  question: "session.execution.succeeded",
  "permission-rejected": "session.execution.interrupted",
  steer: "session.execution.succeeded",
  reads: "session.execution.succeeded",
  "compaction-failed": "session.execution.failed",
  "subagent-requests": "session.execution.succeeded",
  "subagent-notice": "session.execution.succeeded",
};

function problems(fixture: Fixture): { checked: number; problems: string[] } {
  let checked = 0;
  const found: string[] = [];
  fixture.interactions.forEach((i, index) => {
    const where = `${fixture.scenario}#${index} ${i.method} ${i.path} → ${i.status}`;
    if (!i.operationId) return void found.push(`${where}: no operationId`);
    if (isEventStream(i.contentType)) {
      i.events?.forEach((e, n) => {
        checked++;
        if (!validateEvent(e.data)) found.push(`${where} event ${n}: ${ajv.errorsText(validateEvent.errors, { dataVar: "event" }).slice(0, 300)}`);
      });
    } else if (i.body !== undefined && (i.contentType ?? "").includes("json")) {
      const schema = responseSchema(spec, i.operationId, i.status, "application/json");
      if (!schema) return void found.push(`${where}: no schema`);
      checked++;
      const validate: ValidateFunction = ajv.compile(schema);
      if (!validate(i.body)) found.push(`${where}: ${ajv.errorsText(validate.errors, { dataVar: "body" }).slice(0, 300)}`);
    }
  });
  return { checked, problems: found };
}

describe.each(V2_SCENARIOS)("2.x recording %s", (name) => {
  const fixture = loadV2Fixture(name);

  it("matches the server's own spec", () => {
    const report = problems(fixture);
    expect(report.problems).toEqual([]);
    expect(report.checked).toBeGreaterThan(3);
  });

  it("parses with the v2 event parser and ends with the expected outcome", () => {
    const stream = fixture.interactions.find((i) => isEventStream(i.contentType))!;
    const events = stream.events!.map((e) => parseV2Event({ data: JSON.stringify(e.data), event: undefined, id: undefined }));
    expect(events.every((e) => e !== undefined)).toBe(true);
    const session = (fixture.interactions.find((i) => i.operationId === "v2.session.create")!.body as { data: { id: string } }).data.id;
    const turn = events.filter((e) => e && sessionOf(e) === session && e.type.startsWith("session.execution."));
    expect(turn.map((e) => e!.type)).toEqual(["session.execution.started", OUTCOME[name]]);
  });
});
