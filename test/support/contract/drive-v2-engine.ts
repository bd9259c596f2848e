// Drives every request-sending method of the real V2Engine against an OpenAPI document without a
// server: the engine resolves its routes and body fields from `doc` (as it does from a connected
// server's /openapi.json), a capturing fetch keeps each request it sends, and answers each with the
// pre-release server's recorded answer to the same operation (npm run record -- --v2), so methods
// that read an answer before their next request carry on as they would against a server.
import { fileURLToPath } from "node:url";
import { connectV2 } from "../../../src/client/v2/index.js";
import { resolveV2Routes, V2_ROUTE_NAMES, type V2RouteName } from "../../../src/client/v2/routes.js";
import { CATALOG_KINDS } from "../../../src/core/engine/catalog-rows.js";
import { V2Engine } from "../../../src/core/engine/v2/v2-engine.js";
import { loadSpec } from "../../../src/openapi/load-document.js";
import { listOperations, type OpenApiDocument } from "../../../src/openapi/spec.js";
import { routeMatcher } from "../operation-match.js";
import { loadV2Fixture, V2_SCENARIOS } from "../fixture.js";
import type { SentRequest } from "./request-contract.js";

export interface DrivenRequest extends SentRequest {
  /** The engine's operation name (routes.ts), found from the document's operationId. */
  name: V2RouteName | undefined;
}

const PRE_RELEASE = "spec/v2-b622626/openapi.json";
const SERVER = "http://127.0.0.1:4096";
const CONNECTED = { type: "server.connected", data: {} };

/** The pre-release's recorded answers, by the engine's operation name (first recorded wins). */
function recordedAnswers(): Map<V2RouteName, { status: number; body: unknown }> {
  const doc = loadSpec(PRE_RELEASE);
  const routes = resolveV2Routes(doc, "pre-release");
  const nameOf = new Map(V2_ROUTE_NAMES.filter((n) => routes.has(n)).map((n) => [routes.get(n).id, n]));
  const out = new Map<V2RouteName, { status: number; body: unknown }>();
  for (const scenario of V2_SCENARIOS)
    for (const i of loadV2Fixture(scenario).interactions) {
      const name = i.operationId ? nameOf.get(i.operationId) : undefined;
      if (name && !out.has(name) && !i.events) out.set(name, { status: i.status, body: i.body });
    }
  // No scenario reads one form alone: its answer is the recorded form the list showed.
  const forms = out.get("form.list")?.body as { data?: unknown[] } | undefined;
  if (!out.has("form.get") && forms?.data?.[0]) out.set("form.get", { status: 200, body: { data: forms.data[0] } });
  return out;
}

/** Ids the inputs use, from the pre-release's permission and question recordings. */
export const RECORDED = { session: "ses_0001", message: "msg_0001", permission: "per_0001", form: "frm_0001" };

export async function driveV2Engine(doc: OpenApiDocument, version: string): Promise<DrivenRequest[]> {
  const routes = resolveV2Routes(doc, version);
  const nameOf = new Map(V2_ROUTE_NAMES.filter((n) => routes.has(n)).map((n) => [routes.get(n).id, n]));
  const match = routeMatcher(listOperations(doc));
  const answers = recordedAnswers();
  const sent: DrivenRequest[] = [];
  const fetch = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const text = request.body ? await request.clone().text() : "";
    const name = nameOf.get(match(request.method, url.pathname) ?? "");
    sent.push({ name, method: request.method, path: url.pathname, query: Object.fromEntries(url.searchParams), ...(text ? { body: JSON.parse(text) } : {}) });
    // The stream's first event, as every 2.x server sends it (docs/opencode-2x-behaviour.md "Events").
    if (name === "event.subscribe") return new Response(`data: ${JSON.stringify(CONNECTED)}\n\n`, { headers: { "content-type": "text/event-stream" } });
    const answer = name ? answers.get(name) : undefined;
    if (!answer || answer.body === undefined || answer.status === 204) return new Response(null, { status: 204 });
    return Response.json(answer.body, { status: answer.status });
  };
  const client = await connectV2({ url: SERVER, fetch, spec: doc, identity: { major: 2, version, via: "contract", specPath: "/openapi.json" } });
  const engine = new V2Engine(client, "/project");
  const { session: id, message, permission, form } = RECORDED;
  const model = { providerID: "scripted", modelID: "scripted-model" };
  const readme = fileURLToPath(new URL("../../../README.md", import.meta.url));
  // Each call alone: a recorded answer of another shape may make one throw after its request went out.
  const calls: Array<() => Promise<unknown>> = [
    () => engine.health(),
    () => engine.createSession({ title: "contract", model, agent: "build", rules: [{ permission: "bash", pattern: "*", action: "ask" }] }),
    () => engine.createSession({ title: "no rules" }), // the pre-release refuses rules before any request
    () => engine.getSession(id),
    () => engine.listSessions({ limit: 5, search: "contract" }),
    () => engine.childSessions(id),
    () => engine.setRules(id, [{ permission: "edit", pattern: "*", action: "deny" }]),
    () => engine.rename(id, "renamed"),
    () => engine.remove(id),
    () => engine.fork(id, { messageId: message }),
    () => engine.fork(id, {}),
    () => engine.revert(id, { messageId: message }),
    () => engine.unrevert(id),
    () => engine.compact(id, { timeoutMs: 1_000 }),
    () => engine.prompt(id, { text: "hello", model, agent: "plan", agents: ["general"], files: [{ path: readme, name: "README.md", mime: "text/plain" }] }),
    () => engine.prompt(id, { text: "more", delivery: "steer" }),
    () => engine.prompt(id, { text: "later", delivery: "queue" }),
    () => engine.prompt(id, { text: "args", command: "review", model }),
    () => engine.abort(id),
    () => engine.runState(id),
    () => engine.snapshot(id),
    () => engine.lastTurn(id),
    () => engine.newestMessageId(id),
    () => engine.messages(id),
    () => engine.messagesPage(id, { limit: 10, before: message }),
    () => engine.turnDiff(id, message),
    // Pending input: listed on both, cancelled and steered only where the document has the inbox.
    () => engine.queuedInputs(id),
    () => engine.cancelQueued(id, message),
    () => engine.steerQueued(id, message),
    () => engine.listPending([id]),
    () => engine.listPending(),
    () => engine.answerPermission({ requestId: permission, sessionId: id, decision: "once" }),
    () => engine.answerPermission({ requestId: permission, sessionId: id, decision: "reject", message: "not this one" }),
    () => engine.answerQuestion({ questionId: form, sessionId: id, answers: [["blue"]] }),
    () => engine.answerQuestion({ questionId: form, sessionId: id, reject: true }),
    () => engine.providerCatalog(),
    () => engine.configuredModel(),
    ...CATALOG_KINDS.map((kind) => () => engine.catalog(kind)),
  ];
  for (const call of calls) await call().catch(() => undefined);
  // The event stream: opened, its first event read, then closed.
  const controller = new AbortController();
  const events = engine.events({ signal: controller.signal });
  await events.next();
  controller.abort();
  await events.return(undefined);
  return sent;
}
