// The v2 engine's requests held to the released opencode 2.0.26 document (spec/v2/openapi.json):
// the real V2Engine, its routes and body fields resolved from that document as from a connected
// 2.0.26 server, sends every request it can send (support/contract/drive-v2-engine.ts); each must
// hit an operation 2.0.26 has, with the method it takes, and path, query and body must validate
// against its schemas. The same run against the pre-release document the e2e-v2 suite runs on.
// A difference fails naming the engine's operation and the field.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { loadSpec } from "../../../src/openapi/load-document.js";
import { V2_ROUTE_NAMES, type V2RouteName } from "../../../src/client/v2/routes.js";
import { driveV2Engine, RECORDED, type DrivenRequest } from "../../support/contract/drive-v2-engine.js";
import { requestContract, type RequestContract } from "../../support/contract/request-contract.js";

const ENGINE_DIR = "src/core/engine/v2";

/** Every engine operation name the v2 engine's source sends a request to, read from the source. */
function namesTheEngineCalls(): Set<V2RouteName> {
  const known = new Set<string>(V2_ROUTE_NAMES);
  const found = new Set<V2RouteName>();
  for (const file of readdirSync(ENGINE_DIR).filter((f) => f.endsWith(".ts"))) {
    for (const m of readFileSync(join(ENGINE_DIR, file), "utf8").matchAll(/\.request\(\s*"([^"]+)"/g)) {
      if (!known.has(m[1]!)) throw new Error(`${file} calls ${m[1]}, which routes.ts does not name`);
      found.add(m[1] as V2RouteName);
    }
  }
  // The event stream goes through client.events(), not request().
  return found.add("event.subscribe");
}

describe.each([
  { release: "2.0.26", file: "spec/v2/openapi.json" },
  { release: "the pre-release b622626", file: "spec/v2-b622626/openapi.json" },
])("the v2 engine's requests against $release", ({ file }) => {
  const doc = loadSpec(file);
  const version = file.includes("b622626") ? "2.0.0-src.b622626" : "2.0.26";
  let sent: DrivenRequest[];
  let contract: RequestContract;
  beforeAll(async () => {
    contract = requestContract(doc);
    sent = await driveV2Engine(doc, version);
  });

  it("covers every operation the engine's source calls", () => {
    const driven = new Set(sent.map((r) => r.name));
    expect([...namesTheEngineCalls()].filter((n) => !driven.has(n))).toEqual([]);
  });

  it("sends only requests the document takes: route, method, path, query and body", () => {
    expect(sent.length).toBeGreaterThan(30);
    expect(sent.flatMap((r) => contract.check(r.name ?? "(unnamed)", r))).toEqual([]);
  });
});

describe("the contract check", () => {
  const contract = requestContract(loadSpec("spec/v2/openapi.json"));
  const reply = { method: "POST", path: `/api/session/${RECORDED.session}/permission/${RECORDED.permission}/reply`, query: {} };

  it("passes 2.0.26's permission reply body", () => {
    expect(contract.check("permission.reply", { ...reply, body: { decision: "once" } })).toEqual([]);
  });

  it("fails the pre-release's field name, naming the operation and the field", () => {
    const problems = contract.check("permission.reply", { ...reply, body: { reply: "once" } });
    expect(problems).toContain(
      "permission.reply (session.permission.reply, POST /api/session/{sessionID}/permission/{requestID}/reply): body must have required property 'decision'",
    );
    expect(problems.some((p) => p.includes("(reply)"))).toBe(true);
  });

  it("fails a wrong method, a path 2.0.26 does not have, a bad path parameter and an unknown query", () => {
    expect(contract.check("form.cancel", { method: "POST", path: `/api/session/${RECORDED.session}/form/${RECORDED.form}/cancel`, query: {} })).toEqual([
      "form.cancel: no operation for POST /api/session/ses_0001/form/frm_0001/cancel",
    ]);
    expect(contract.check("session.wait", { method: "POST", path: `/api/session/${RECORDED.session}/wait`, query: {} })).toEqual([
      "session.wait: no operation for POST /api/session/ses_0001/wait",
    ]);
    expect(contract.check("session.rename", { method: "POST", path: `/api/session/${RECORDED.session}/rename`, query: {} })).toEqual([
      "session.rename: no operation for POST /api/session/ses_0001/rename",
    ]);
    expect(contract.check("session.rename", { method: "POST", path: `/api/session/${RECORDED.session}`, query: {}, body: { title: "t" } })).toEqual([
      "session.rename: /api/session/ses_0001 takes GET (session.get), DELETE (session.remove), PATCH (session.update), not POST",
    ]);
    expect(contract.check("session.get", { method: "GET", path: "/api/session/nope", query: {} })).toEqual([
      'session.get (session.get, GET /api/session/{sessionID}): path.sessionID must match pattern "^ses"',
    ]);
    expect(contract.check("session.get", { method: "GET", path: `/api/session/${RECORDED.session}`, query: { directory: "/x" } })).toEqual([
      'session.get (session.get, GET /api/session/{sessionID}): sends query {"directory":"/x"} but the operation declares none',
    ]);
  });
});
