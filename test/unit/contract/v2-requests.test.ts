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
import { connectV2 } from "../../../src/client/v2/client.js";
import { V2Engine } from "../../../src/core/engine/v2/v2-engine.js";
import { resolveV2Routes, V2_ROUTE_NAMES, type V2RouteName } from "../../../src/client/v2/routes.js";
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
  { release: "2.0.26", file: "spec/v2/openapi.json", lacks: [] },
  // No per-session diff (line counts) and no inbox to cancel or steer a queued prompt in.
  { release: "the pre-release b622626", file: "spec/v2-b622626/openapi.json", lacks: ["session.diff", "inbox.cancel", "inbox.steer"] },
])("the v2 engine's requests against $release", ({ file, lacks }) => {
  const doc = loadSpec(file);
  const version = file.includes("b622626") ? "2.0.0-src.b622626" : "2.0.26";
  let sent: DrivenRequest[];
  let contract: RequestContract;
  beforeAll(async () => {
    contract = requestContract(doc);
    sent = await driveV2Engine(doc, version);
  });

  it("covers every operation the engine's source calls that this document has", () => {
    const routes = resolveV2Routes(doc, version);
    const driven = new Set(sent.map((r) => r.name));
    expect([...namesTheEngineCalls()].filter((n) => routes.has(n) && !driven.has(n))).toEqual([]);
    // What the engine calls and this release lacks is optional: the engine does without it (or says so) and sends nothing.
    expect([...namesTheEngineCalls()].filter((n) => !routes.has(n))).toEqual(lacks);
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

// The routes 2.0.26 added or changed that the engine now uses: the requests as the engine builds
// them against a route table resolved from 2.0.26's document (no 2.0.26 server runs here), each
// validated against that document, and the pre-release's document getting today's requests.
describe("2.0.26's inbox, diff, rename and per-session rules, as the engine sends them", () => {
  const released = loadSpec("spec/v2/openapi.json");
  const contract = requestContract(released);
  let on2026: DrivenRequest[];
  let onPreRelease: DrivenRequest[];
  beforeAll(async () => {
    [on2026, onPreRelease] = await Promise.all([
      driveV2Engine(released, "2.0.26"),
      driveV2Engine(loadSpec("spec/v2-b622626/openapi.json"), "2.0.0-src.b622626"),
    ]);
  });
  const sentTo = (sent: DrivenRequest[], name: V2RouteName) =>
    sent.filter((r) => r.name === name).map(({ method, path, query, body }) => ({ method, path, query, body }));
  const { session, message } = RECORDED;

  it("states what each server can do from its document, never its version", async () => {
    const capabilities = async (file: string, version: string) => {
      // No request goes out for them: a fetch that fails proves it.
      const fetch = () => Promise.reject(new Error("capabilities must not ask the server"));
      const client = await connectV2({
        url: "http://127.0.0.1:4096",
        fetch,
        spec: loadSpec(file),
        identity: { major: 2, version, via: "contract", specPath: "/openapi.json" },
      });
      return new V2Engine(client, "/project").capabilities();
    };
    expect(await capabilities("spec/v2/openapi.json", "2.0.26")).toMatchObject({
      sessionRules: true,
      turnDiffLines: true,
      listQueued: true,
      cancelQueued: true,
      steerQueued: true,
    });
    expect(await capabilities("spec/v2-b622626/openapi.json", "2.0.0-src.b622626")).toMatchObject({
      sessionRules: false,
      turnDiffLines: false,
      listQueued: true,
      cancelQueued: false,
      steerQueued: false,
    });
    // The same document under another version string: the same answer.
    expect(await capabilities("spec/v2/openapi.json", "2.0.0-src.b622626")).toMatchObject({ sessionRules: true, cancelQueued: true });
  });

  it("sends the rules on create where the document declares `permissions` there, and nothing of them where it does not", () => {
    const created = sentTo(on2026, "session.create");
    expect(created[0]!.body).toMatchObject({ title: "contract", permissions: [{ action: "shell", resource: "*", effect: "ask" }] });
    expect(contract.check("session.create", created[0]!)).toEqual([]);
    // The pre-release refuses a session with rules before any request; the one without goes out without them.
    expect(sentTo(onPreRelease, "session.create").map((r) => r.body)).toEqual([{ title: "no rules", location: { directory: "/project" } }]);
  });

  it("renames (and sets rules) with PATCH /api/session/{id}; the pre-release with POST …/rename {title}", () => {
    expect(sentTo(on2026, "session.rename")).toEqual([
      { method: "PATCH", path: `/api/session/${session}`, query: {}, body: { permissions: [{ action: "edit", resource: "*", effect: "deny" }] } },
      { method: "PATCH", path: `/api/session/${session}`, query: {}, body: { title: "renamed" } },
    ]);
    expect(sentTo(onPreRelease, "session.rename")).toEqual([{ method: "POST", path: `/api/session/${session}/rename`, query: {}, body: { title: "renamed" } }]);
  });

  it("reads a turn's line counts from the per-session diff where the document has it; the pre-release's messages otherwise", () => {
    expect(sentTo(on2026, "session.diff")).toEqual([
      { method: "GET", path: `/api/session/${session}/diff`, query: { from: message, context: "3" }, body: undefined },
    ]);
    expect(sentTo(onPreRelease, "session.diff")).toEqual([]);
  });

  it("lists, cancels and steers a queued prompt through 2.0.26's inbox; the pre-release only lists (its `pending`)", () => {
    expect(sentTo(on2026, "inbox.list")).toEqual([{ method: "GET", path: `/api/session/${session}/inbox`, query: {}, body: undefined }]);
    expect(sentTo(on2026, "inbox.cancel")).toEqual([{ method: "DELETE", path: `/api/session/${session}/inbox/${message}`, query: {}, body: undefined }]);
    expect(sentTo(on2026, "inbox.steer")).toEqual([
      { method: "PATCH", path: `/api/session/${session}/inbox/${message}`, query: {}, body: { delivery: "steer" } },
    ]);
    for (const name of ["inbox.list", "inbox.cancel", "inbox.steer", "session.diff"] as const)
      for (const r of sentTo(on2026, name)) expect(contract.check(name, r), name).toEqual([]);
    expect(sentTo(onPreRelease, "inbox.list")).toEqual([{ method: "GET", path: `/api/session/${session}/pending`, query: {}, body: undefined }]);
    expect([...sentTo(onPreRelease, "inbox.cancel"), ...sentTo(onPreRelease, "inbox.steer")]).toEqual([]);
  });

  it("fails a wrong body field, method or query on these routes, naming the operation and the field", () => {
    const steer = { method: "PATCH", path: `/api/session/${session}/inbox/${message}`, query: {} };
    expect(contract.check("inbox.steer", { ...steer, body: { mode: "steer" } })).toEqual([
      "inbox.steer (session.inbox.update, PATCH /api/session/{sessionID}/inbox/{inboxID}): body must have required property 'delivery'",
      "inbox.steer (session.inbox.update, PATCH /api/session/{sessionID}/inbox/{inboxID}): body must NOT have additional properties (mode)",
    ]);
    expect(contract.check("inbox.steer", { ...steer, body: { delivery: "now" } })).toEqual([
      "inbox.steer (session.inbox.update, PATCH /api/session/{sessionID}/inbox/{inboxID}): body.delivery must be equal to one of the allowed values (steer, queue)",
    ]);
    expect(contract.check("inbox.cancel", { ...steer, method: "POST" })).toEqual([
      `inbox.cancel: /api/session/${session}/inbox/${message} takes DELETE (session.inbox.cancel), PATCH (session.inbox.update), not POST`,
    ]);
    // 1.x's field name for the rules, and a rule effect 2.0.26 does not know.
    expect(contract.check("session.create", { method: "POST", path: "/api/session", query: {}, body: { title: "t", permission: { bash: "ask" } } })).toEqual([
      "session.create (session.create, POST /api/session): body must NOT have additional properties (permission)",
    ]);
    expect(
      contract.check("session.create", {
        method: "POST",
        path: "/api/session",
        query: {},
        body: { permissions: [{ action: "shell", resource: "*", effect: "maybe" }] },
      }),
    ).toContain("session.create (session.create, POST /api/session): body.permissions.0.effect must be equal to one of the allowed values (allow, deny, ask)");
    // 1.x's per-turn diff query.
    expect(contract.check("session.diff", { method: "GET", path: `/api/session/${session}/diff`, query: { messageID: message } })).toEqual([
      "session.diff (session.diff, GET /api/session/{sessionID}/diff): query must NOT have additional properties (messageID)",
    ]);
  });
});
