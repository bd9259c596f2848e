// The v2 route adapter: every operation the v2 engine needs, by an engine-facing name, resolved from
// the connected 2.x server's own OpenAPI document. 2.x releases moved and renamed routes (the
// pre-release snapshot b622626 vs the released 2.0.26, see docs/opencode-2x-behaviour.md):
// operationIds lost their `v2.` prefix, `wait` moved under /api/experimental, rename became
// `PATCH /api/session/{id}` (session.update), revert clear became `DELETE .../revert`, questions
// exist only on the pre-release (2.0.26 has forms), the per-session diff only on 2.0.26, and the
// pending input is the pre-release's read-only `pending` list but 2.0.26's `inbox` (list, cancel a
// queued prompt, turn it into a steer). So each name lists the operationIds it has had, newest
// first; the first one the server's document has wins.
// v2 route names live here and nowhere else.
import { OpencodeError } from "../errors.js";
import type { RouteSpec } from "../request.js";

export interface RouteCandidates {
  /** operationIds this operation has had across 2.x releases, newest first. */
  ids: readonly string[];
  /** Not every 2.x release has it: a missing one is not an error until it is called. */
  optional?: true;
  /** What it is for, in the error when it is missing. */
  purpose: string;
}

/** The engine-facing operation names. */
export const V2_ROUTES = {
  "server.info": { ids: ["server.info", "v2.health.get"], purpose: "identify the server (version, pid)" },
  "session.create": { ids: ["session.create", "v2.session.create"], purpose: "create a session" },
  "session.get": { ids: ["session.get", "v2.session.get"], purpose: "read a session" },
  "session.list": { ids: ["session.list", "v2.session.list"], purpose: "list sessions" },
  "session.remove": { ids: ["session.remove", "v2.session.remove"], purpose: "delete a session" },
  "session.prompt": { ids: ["session.prompt", "v2.session.prompt"], purpose: "send a prompt (delivery steer or queue)" },
  "session.command": { ids: ["session.command", "v2.session.command"], purpose: "run a slash command" },
  "session.skill": { ids: ["experimental.session.skill", "v2.session.skill"], purpose: "run a skill" },
  "session.shell": { ids: ["session.shell", "v2.session.shell"], purpose: "run a shell command in the session" },
  "session.active": { ids: ["session.active", "v2.session.active"], purpose: "see which sessions are running" },
  "session.messages": { ids: ["session.message.list", "v2.message.list"], purpose: "read a session's messages" },
  "session.message": { ids: ["session.message.get", "v2.session.message"], purpose: "read one message" },
  "session.wait": { ids: ["experimental.session.wait", "v2.session.wait"], purpose: "wait until a session is idle" },
  "session.interrupt": { ids: ["session.interrupt", "v2.session.interrupt"], purpose: "interrupt (abort) a running turn" },
  "session.fork": { ids: ["session.fork", "v2.session.fork"], purpose: "fork a session" },
  "session.rename": { ids: ["session.update", "v2.session.rename"], purpose: "rename a session" },
  "session.revert.stage": { ids: ["session.revert.stage", "v2.session.revert.stage"], purpose: "revert to a message" },
  "session.revert.commit": { ids: ["session.revert.commit", "v2.session.revert.commit"], purpose: "make a staged revert final" },
  "session.revert.clear": { ids: ["session.revert.clear", "v2.session.revert.clear"], purpose: "undo a staged revert" },
  "session.compact": { ids: ["session.compact", "v2.session.compact"], purpose: "compact a session" },
  "session.switchModel": { ids: ["session.switchModel", "v2.session.switchModel"], purpose: "change a session's model" },
  "session.switchAgent": { ids: ["session.switchAgent", "v2.session.switchAgent"], purpose: "change a session's agent" },
  "session.diff": { ids: ["session.diff"], optional: true, purpose: "read a session's file changes" },
  "inbox.list": { ids: ["session.inbox.list", "v2.session.pending.list"], optional: true, purpose: "list a session's prompts waiting to be promoted" },
  "inbox.cancel": { ids: ["session.inbox.cancel"], optional: true, purpose: "cancel a queued prompt" },
  "inbox.steer": { ids: ["session.inbox.update"], optional: true, purpose: "turn a queued prompt into a steer" },
  "vcs.diff": { ids: ["vcs.diff", "v2.vcs.diff"], purpose: "read the project's working-tree diff" },
  "permission.list": { ids: ["session.permission.list", "v2.session.permission.list"], purpose: "list a session's pending permissions" },
  "permission.requests": { ids: ["permission.request.list", "v2.permission.request.list"], purpose: "list every pending permission" },
  "permission.reply": { ids: ["session.permission.reply", "v2.session.permission.reply"], purpose: "answer a permission request" },
  "question.list": { ids: ["session.question.list", "v2.session.question.list"], optional: true, purpose: "list a session's pending questions" },
  "question.reply": { ids: ["session.question.reply", "v2.session.question.reply"], optional: true, purpose: "answer a question" },
  "question.reject": { ids: ["session.question.reject", "v2.session.question.reject"], optional: true, purpose: "decline a question" },
  "form.list": { ids: ["session.form.list", "v2.session.form.list"], purpose: "list a session's pending forms" },
  "form.requests": { ids: ["form.list", "v2.form.request.list"], purpose: "list every pending form" },
  "form.get": { ids: ["session.form.get", "v2.session.form.get"], purpose: "read a form" },
  "form.reply": { ids: ["session.form.reply", "v2.session.form.reply"], purpose: "answer a form" },
  "form.cancel": { ids: ["session.form.cancel", "v2.session.form.cancel"], purpose: "cancel a form" },
  "model.list": { ids: ["model.list", "v2.model.list"], purpose: "list models" },
  "model.default": { ids: ["model.default", "v2.model.default"], purpose: "read the default model" },
  "provider.list": { ids: ["provider.list", "v2.provider.list"], purpose: "list providers" },
  "catalog.list": { ids: ["integration.list", "v2.integration.list"], purpose: "list the provider catalogue (integrations that can be connected)" },
  "agent.list": { ids: ["agent.list", "v2.agent.list"], purpose: "list agents" },
  "command.list": { ids: ["command.list", "v2.command.list"], purpose: "list commands" },
  "skill.list": { ids: ["skill.list", "v2.skill.list"], purpose: "list skills" },
  "config.get": { ids: ["config.get", "v2.config.get"], optional: true, purpose: "read its config" },
  "mcp.list": { ids: ["mcp.list", "v2.mcp.list"], optional: true, purpose: "list its MCP servers" },
  "project.list": { ids: ["project.list", "v2.project.list"], optional: true, purpose: "list its projects" },
  "event.subscribe": { ids: ["event.subscribe", "v2.event.subscribe"], purpose: "follow the server's events" },
} as const satisfies Record<string, RouteCandidates>;

export type V2RouteName = keyof typeof V2_ROUTES;
export const V2_ROUTE_NAMES = Object.keys(V2_ROUTES) as V2RouteName[];

export interface ResolvedRoute extends RouteSpec {
  name: V2RouteName;
  /**
   * Top-level properties of the JSON request body on this server, e.g. `["reply", "message"]` for
   * the pre-release's permission reply and `["decision", "message"]` for 2.0.26's: lets a caller
   * build the body this release takes without guessing from its version.
   */
  bodyProperties: readonly string[];
}

/** The engine-facing name is known but this server has no route for it. */
export class RouteMissingError extends OpencodeError {
  override name = "RouteMissingError";
  readonly route: string;
  readonly serverVersion: string;
  constructor(route: V2RouteName, serverVersion: string) {
    const c: RouteCandidates = V2_ROUTES[route];
    super(
      `opencode ${serverVersion} cannot ${c.purpose}: its API has no ${route} operation (looked for ${c.ids.join(", ")} in its /openapi.json). ` +
        "Use an opencode 2.x release that has it, or do without.",
      0,
    );
    this.route = route;
    this.serverVersion = serverVersion;
  }
}

export interface V2Routes {
  readonly serverVersion: string;
  /** The route for `name`; throws {@link RouteMissingError} when this server has none. */
  get(name: V2RouteName): ResolvedRoute;
  has(name: V2RouteName): boolean;
  /** Required names this server lacks (empty for a usable 2.x server). */
  readonly missing: readonly V2RouteName[];
  /** Optional names this server lacks. */
  readonly unavailable: readonly V2RouteName[];
}

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

/** Resolves every name against a parsed OpenAPI document of a 2.x server. */
export function resolveV2Routes(spec: unknown, serverVersion: string): V2Routes {
  const byId = indexOperations(spec);
  const resolved = new Map<V2RouteName, ResolvedRoute>();
  const missing: V2RouteName[] = [];
  const unavailable: V2RouteName[] = [];
  for (const name of V2_ROUTE_NAMES) {
    const candidates: RouteCandidates = V2_ROUTES[name];
    const id = candidates.ids.find((c) => byId.has(c));
    if (id) resolved.set(name, { ...byId.get(id)!, name });
    else (candidates.optional ? unavailable : missing).push(name);
  }
  return {
    serverVersion,
    missing,
    unavailable,
    has: (name) => resolved.has(name),
    get(name) {
      const route = resolved.get(name);
      if (!route) throw new RouteMissingError(name, serverVersion);
      return route;
    },
  };
}

function indexOperations(spec: unknown): Map<string, RouteSpec & { bodyProperties: string[] }> {
  const paths = isObject(spec) && isObject(spec.paths) ? spec.paths : undefined;
  if (!paths) throw new OpencodeError("The server's /openapi.json has no paths: it is not an OpenAPI document of opencode 2.x.", 0);
  const out = new Map<string, RouteSpec & { bodyProperties: string[] }>();
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    for (const method of METHODS) {
      const op = item[method];
      if (!isObject(op) || typeof op.operationId !== "string") continue;
      out.set(op.operationId, {
        id: op.operationId,
        method,
        path,
        streaming: successMedia(op).some((type) => type.startsWith("text/event-stream")),
        takesDirectory: Array.isArray(op.parameters) && op.parameters.some((p) => isObject(p) && p.in === "query" && p.name === "directory"),
        successContentType: successMedia(op)[0] ?? null,
        bodyProperties: bodyProperties(spec as Record<string, unknown>, op),
      });
    }
  }
  return out;
}

function bodyProperties(spec: Record<string, unknown>, op: Record<string, unknown>): string[] {
  const body = isObject(op.requestBody) && isObject(op.requestBody.content) ? op.requestBody.content["application/json"] : undefined;
  let schema = isObject(body) ? body.schema : undefined;
  // The body may be a `$ref` to a component (Form.Reply); follow a few.
  for (let i = 0; i < 5 && isObject(schema) && typeof schema.$ref === "string"; i++) {
    const name = schema.$ref.replace(/^#\/components\/schemas\//, "");
    const components = isObject(spec.components) && isObject(spec.components.schemas) ? spec.components.schemas : {};
    schema = components[name];
  }
  return isObject(schema) && isObject(schema.properties) ? Object.keys(schema.properties) : [];
}

function successMedia(op: Record<string, unknown>): string[] {
  const responses = isObject(op.responses) ? op.responses : {};
  return Object.entries(responses)
    .filter(([status]) => status.startsWith("2"))
    .flatMap(([, r]) => (isObject(r) && isObject(r.content) ? Object.keys(r.content) : []));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
