// Every recorded response must match the spec: each JSON body against its operation's response
// schema for that status, each event of a stream against the stream's schema (Ajv2020). A broken
// copy of a fixture must fail, so the check is known to bite.
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { describe, expect, it } from "vitest";
import { loadSpec } from "../../../src/openapi/load-document.js";
import { responseSchema } from "../../../src/openapi/spec.js";
import { isEventStream, loadFixture, SCENARIOS, type Fixture } from "../../support/fixture.js";

// ajv-formats is CommonJS: under NodeNext its plugin may sit on `.default`.
const addFormats = (addFormatsModule.default ?? addFormatsModule) as unknown as typeof addFormatsModule.default;
const ajv = new Ajv2020({ strict: false });
addFormats(ajv);
const spec = loadSpec("spec/openapi.json");

const validators = new Map<string, ValidateFunction | null>();
function validatorFor(operationId: string, status: number, contentType: string): ValidateFunction | null {
  const key = `${operationId} ${status} ${contentType}`;
  if (!validators.has(key)) {
    const schema = responseSchema(spec, operationId, status, contentType);
    validators.set(key, schema ? ajv.compile(schema) : null);
  }
  return validators.get(key)!;
}

function eventType(data: unknown): string {
  return String((data as { payload?: { type?: unknown } } | null)?.payload?.type);
}

// Where opencode 1.18.33 itself departs from its spec (seen in every recording): `server.connected`
// on /global/event comes as `{payload}` alone, but GlobalEvent requires `directory`. An agent
// defined in the config (the discovery recording) comes from GET /agent with `topP`, `temperature`,
// `color`, `variant` and `steps` set to null, where the spec allows only a value or absence.
const KNOWN_DEVIATIONS = [
  /GET \/global\/event → 200 event \d+ \(server\.connected\): body must have required property 'directory'$/,
  /GET \/agent → 200: body\/\d+\/(topP|temperature|color|variant|steps) must be \w+$/,
];
const isKnown = (problem: string) => KNOWN_DEVIATIONS.some((re) => re.test(problem));

interface Report {
  /** Bodies and events checked against a schema. */
  checked: number;
  /** "where: what is wrong" for each failure, including bodies the spec gives no schema for. */
  problems: string[];
}

function validateFixture(fixture: Fixture): Report {
  const report: Report = { checked: 0, problems: [] };
  fixture.interactions.forEach((i, index) => {
    const where = `${fixture.scenario}#${index} ${i.method} ${i.path} → ${i.status}`;
    if (!i.operationId) return void report.problems.push(`${where}: no operationId`);
    const check = (value: unknown, contentType: string, what: string) => {
      const validate = validatorFor(i.operationId!, i.status, contentType);
      if (!validate) return void report.problems.push(`${where}: the spec has no ${contentType} schema for ${i.operationId} ${i.status}`);
      report.checked++;
      if (!validate(value)) report.problems.push(`${where}${what}: ${ajv.errorsText(validate.errors, { dataVar: "body" })}`);
    };
    if (isEventStream(i.contentType)) {
      i.events?.forEach((e, n) => check(e.data, "text/event-stream", ` event ${n} (${eventType(e.data)})`));
    } else if (i.body !== undefined && (i.contentType ?? "").includes("json")) {
      check(i.body, "application/json", "");
    }
  });
  return report;
}

describe("recorded responses match the spec", () => {
  it.each(SCENARIOS)("%s: every JSON body and event is valid for its operation and status", (name) => {
    const report = validateFixture(loadFixture(name));
    expect(report.problems.filter((p) => !isKnown(p))).toEqual([]);
    expect(report.checked).toBeGreaterThan(0);
  });

  it("still sees opencode's own deviation: server.connected without directory", () => {
    const report = validateFixture(loadFixture("text-turn"));
    expect(report.problems).toHaveLength(1);
    expect(isKnown(report.problems[0]!)).toBe(true);
  });

  it("covers success and error bodies and stream events", () => {
    const checked = SCENARIOS.map((name) => loadFixture(name).interactions).flat();
    expect(checked.some((i) => i.status === 404 && i.body !== undefined)).toBe(true);
    expect(checked.some((i) => (i.events?.length ?? 0) > 0)).toBe(true);
  });

  it("rejects a broken copy: a Session without id", () => {
    const broken = structuredClone(loadFixture("session-crud"));
    const create = broken.interactions.find((i) => i.operationId === "session.create")!;
    delete (create.body as Record<string, unknown>).id;
    const report = validateFixture(broken);
    expect(report.problems).toHaveLength(1);
    expect(report.problems[0]).toContain("POST /session");
    expect(report.problems[0]).toContain("must have required property 'id'");
  });

  it("rejects a broken copy: an event of an unknown shape", () => {
    const broken = structuredClone(loadFixture("text-turn"));
    const stream = broken.interactions.find((i) => i.events?.length)!;
    stream.events![1]!.data = { payload: { id: "evt_0001", type: "session.idle", properties: {} } }; // no sessionID
    const problems = validateFixture(broken).problems.filter((p) => !isKnown(p));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain("event 1 (session.idle)");
  });
});
