// Withdrawing a sent message still queued behind another turn (src/core/placement/send-cancel.ts)
// on opencode 2.0.26, whose document has the session inbox's cancel. No 2.0.26 server runs here: the
// real V2Engine resolves its routes from the released document (spec/v2/openapi.json) as from a
// connected 2.0.26, a fetch plays the inbox (its list, its DELETE), and every request the engine
// sends must validate against that document. The pre-release's document (the one e2e-v2 runs) has
// only the list: there the prompt is waiting but not withdrawable, and a withdraw is refused.
import { describe, expect, it } from "vitest";
import { loadSpec } from "../../../src/openapi/load-document.js";
import { connectV2 } from "../../../src/client/v2/client.js";
import { Conductor } from "../../../src/core/conductor.js";
import { V2Engine } from "../../../src/core/engine/v2/v2-engine.js";
import { QueuedMessageError } from "../../../src/core/placement/send-cancel.js";
import { resolveV2Routes, V2_ROUTE_NAMES } from "../../../src/client/v2/routes.js";
import { listOperations } from "../../../src/openapi/spec.js";
import { routeMatcher } from "../../support/operation-match.js";
import { requestContract } from "../../support/contract/request-contract.js";

const SESSION = "ses_0001";
const QUEUED = "msg_0002";

/** A 2.x server's inbox holding `ids` (2.0.26 entries), `keeps`: a server that answers the cancel but keeps listing it. */
async function inboxServer(file: string, version: string, ids: string[], o: { keeps?: boolean } = {}) {
  const doc = loadSpec(file);
  const routes = resolveV2Routes(doc, version);
  const nameOf = new Map(V2_ROUTE_NAMES.filter((n) => routes.has(n)).map((n) => [routes.get(n).id, n]));
  const match = routeMatcher(listOperations(doc));
  const contract = requestContract(doc);
  const inbox = [...ids];
  const sent: Array<{ name: string | undefined; method: string; path: string; problems: string[] }> = [];
  const fetch = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const name = nameOf.get(match(request.method, url.pathname) ?? "");
    const wire = { method: request.method, path: url.pathname, query: Object.fromEntries(url.searchParams), body: undefined };
    sent.push({ name, method: request.method, path: url.pathname, problems: name ? contract.check(name, wire) : ["no operation"] });
    if (name === "inbox.list") {
      const data = inbox.map((id) => ({ id, sessionID: SESSION, time: { created: 1 }, type: "user", payload: { text: "later" }, delivery: "queue" }));
      return Response.json({ data });
    }
    if (name === "session.get") return Response.json({ data: { id: SESSION, title: "queued", location: { directory: "/project" }, time: { created: 1 } } });
    if (name === "inbox.cancel") {
      const at = inbox.indexOf(url.pathname.split("/").at(-1)!);
      if (at >= 0 && !o.keeps) inbox.splice(at, 1);
      return new Response(null, { status: 204 });
    }
    return new Response(null, { status: 404 });
  };
  const client = await connectV2({
    url: "http://127.0.0.1:4096",
    fetch,
    spec: doc,
    identity: { major: 2, version, via: "contract", specPath: "/openapi.json" },
  });
  return { engine: new V2Engine(client, "/project"), sent, inbox };
}

describe("a queued message on 2.0.26's inbox", () => {
  it("is found waiting by its input id, withdrawable; the withdraw cancels it and re-lists the inbox to see it gone", async () => {
    const { engine, sent, inbox } = await inboxServer("spec/v2/openapi.json", "2.0.26", ["msg_0001", QUEUED]);
    expect(await engine.waitingPrompt(SESSION, { inputId: QUEUED })).toEqual({
      inputId: QUEUED,
      withdrawable: true,
      onInterrupt: expect.stringContaining("oc_interrupt"),
    });
    await engine.withdrawPrompt(SESSION, QUEUED);
    expect(inbox).toEqual(["msg_0001"]);
    expect(sent.map((r) => [r.name, r.method, r.path])).toEqual([
      ["inbox.list", "GET", `/api/session/${SESSION}/inbox`],
      ["inbox.cancel", "DELETE", `/api/session/${SESSION}/inbox/${QUEUED}`],
      ["inbox.list", "GET", `/api/session/${SESSION}/inbox`],
    ]);
    expect(sent.flatMap((r) => r.problems)).toEqual([]);
    // Gone: no longer waiting, so a second cancel would be the turn's own (interrupted as any task).
    expect(await engine.waitingPrompt(SESSION, { inputId: QUEUED })).toBeUndefined();
  });

  it("a server that answers the cancel but still lists the prompt: the withdraw fails, so nothing reads cancelled", async () => {
    const { engine } = await inboxServer("spec/v2/openapi.json", "2.0.26", [QUEUED], { keeps: true });
    await expect(engine.withdrawPrompt(SESSION, QUEUED)).rejects.toThrow(`opencode 2.0.26 answered the cancel of queued prompt ${QUEUED} but still lists it`);
  });

  it("a prompt no longer listed (promoted: its own turn runs) is not waiting", async () => {
    const { engine } = await inboxServer("spec/v2/openapi.json", "2.0.26", ["msg_0001"]);
    expect(await engine.waitingPrompt(SESSION, { inputId: QUEUED })).toBeUndefined();
  });

  it("on the pre-release's document it is waiting but not withdrawable, and a withdraw is refused naming the version before any cancel", async () => {
    const { engine, sent } = await inboxServer("spec/v2-b622626/openapi.json", "2.0.0-src.b622626", [QUEUED]);
    expect(await engine.waitingPrompt(SESSION, { inputId: QUEUED })).toMatchObject({ inputId: QUEUED, withdrawable: false });
    await expect(engine.withdrawPrompt(SESSION, QUEUED)).rejects.toThrow("opencode 2.0.0-src.b622626 cannot cancel a queued prompt");
    expect(sent.map((r) => r.method)).toEqual(["GET"]);
    expect(sent.flatMap((r) => r.problems)).toEqual([]);
  });
});

/** A conductor on that server whose ledger holds an oc_send record of QUEUED (as startSend puts it on record). */
async function sendRecord(engine: V2Engine) {
  const conductor = new Conductor({ engine, queue: false });
  const { record } = await conductor.ledger.claim({ kind: "send", origin: "oc_send", placement: "here", server: engine.url, size: 1, delivery: "queue" });
  await conductor.ledger.attach(record.id, 0, SESSION, { priorTurn: "msg_0001", sentInput: QUEUED });
  return { conductor, id: record.id };
}

describe("conductor.delegations.cancel of a send still queued", () => {
  it("2.0.26: withdrawn from the inbox (gone on the re-read), then cancelled with a note; no interrupt is sent", async () => {
    const { engine, sent, inbox } = await inboxServer("spec/v2/openapi.json", "2.0.26", [QUEUED]);
    const { conductor, id } = await sendRecord(engine);
    const cancelled = await conductor.delegations.cancel(id);
    expect(cancelled).toMatchObject({ status: "cancelled", note: "taken off opencode's queue before it ran" });
    expect(inbox).toEqual([]);
    expect(sent.map((r) => r.name)).not.toContain("session.interrupt");
    expect(sent.filter((r) => r.name?.startsWith("inbox.")).map((r) => r.name)).toEqual(["inbox.list", "inbox.cancel", "inbox.list"]);
    expect(sent.flatMap((r) => r.problems)).toEqual([]);
    conductor.close();
  });

  it("the pre-release: refused with QueuedMessageError, nothing interrupted, and the record neither cancelled nor asked to be", async () => {
    const { engine, sent } = await inboxServer("spec/v2-b622626/openapi.json", "2.0.0-src.b622626", [QUEUED]);
    const { conductor, id } = await sendRecord(engine);
    const refused = conductor.delegations.cancel(id);
    await expect(refused).rejects.toBeInstanceOf(QueuedMessageError);
    await expect(refused).rejects.toThrow(
      `Not cancelled: the message is queued in opencode session ${SESSION} behind a turn that is not this message's, and opencode 2.0.0-src.b622626 cannot withdraw a queued message. It will run after the current turn; nothing was interrupted.`,
    );
    expect(sent.map((r) => r.name)).not.toContain("session.interrupt");
    const kept = await conductor.ledger.get(id);
    expect(kept?.end).toBeUndefined();
    expect(kept?.cancelRequestedAt).toBeUndefined();
    conductor.close();
  });
});
