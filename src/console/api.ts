// The console's JSON and SSE endpoints. Reads go to the store, the state files or opencode through
// the core; the two writes (answer a request, stop an idle instance) act on opencode directly, so
// an MCP call waiting on the request goes on by itself, and each is audited as the console's.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Engine } from "../core/engine/engine.js";
import { type AuditLog, readAudit, type AuditEntry } from "../core/governance/audit.js";
import { terminate, InstanceRegistry } from "../core/instances/registry.js";
import { sessionDiff } from "../core/sessions/diff.js";
import { sessionScope } from "../core/sessions/scope.js";
import { partView, type PartView } from "./parts.js";
import type { Servers } from "./servers.js";
import type { Store } from "./store.js";

export interface ApiContext {
  store: Store;
  servers: Servers;
  auditPath?: string;
  stateDir: string;
  audit: AuditLog;
  /** Sends JSON with every known secret scrubbed. */
  json(res: ServerResponse, status: number, body: unknown): void;
  /** The same scrub for an SSE data line. */
  scrub(text: string): string;
}

export class BadRequest extends Error {}

const MAX_BODY = 64 * 1024;

export async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new BadRequest(`request body over ${MAX_BODY} bytes`);
    chunks.push(chunk as Buffer);
  }
  try {
    const value = JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
    if (value && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // below
  }
  throw new BadRequest("the body must be a JSON object");
}

/** The live stream: a snapshot, then each change as it happens. */
export function events(ctx: ApiContext, req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store", connection: "keep-alive" });
  const send = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${ctx.scrub(JSON.stringify(data))}\n\n`);
  send("snapshot", { tasks: [...ctx.store.tasks.values()], pending: [...ctx.store.pending.values()], servers: ctx.servers.list() });
  const unsubscribe = ctx.store.subscribe((change) => {
    if (change.type === "task") send("task", change.task);
    else if (change.type === "pending") send("pending", change.pending);
    else if (change.type === "servers") send("servers", ctx.servers.list());
    else if (change.type === "audit") send("audit", {});
    else {
      const { live } = change;
      if ("delta" in live) send("part", { sessionId: live.sessionId, delta: live.delta });
      else {
        const part = partView(live.part as never, live.role);
        if (part) send("part", { sessionId: live.sessionId, part });
      }
    }
  });
  // Comments keep proxies and the browser from taking a quiet stream for a dead one.
  const beat = setInterval(() => res.write(": keep-alive\n\n"), 15_000);
  req.on("close", () => {
    clearInterval(beat);
    unsubscribe();
  });
}

/** One task: its record, its transcript (every message of the session), the diff of its files. */
export async function taskDetail(ctx: ApiContext, res: ServerResponse, id: string): Promise<void> {
  const task = ctx.store.tasks.get(id);
  if (!task) return ctx.json(res, 404, { error: `no task ${id.slice(0, 80)} in the state dir's task records` });
  const conductor = ctx.servers.conductor(task.server);
  if (!conductor) return ctx.json(res, 200, { task, transcript: [], diff: [], error: "its server is not followed" });
  try {
    const scope = await sessionScope(conductor, id);
    const messages = await scope.engine.messages(id);
    const transcript: PartView[] = messages.flatMap((m) => m.parts.flatMap((p) => partView(p as never, m.info.role) ?? []));
    const diff = task.files.length > 0 ? (await sessionDiff(conductor, id).catch(() => ({ files: [] }))).files : [];
    ctx.json(res, 200, { task, transcript, diff });
  } catch (error) {
    ctx.json(res, 200, { task, transcript: [], diff: [], error: `opencode did not answer: ${(error as Error).message.slice(0, 200)}` });
  }
}

const PAGE_SIZES = new Set([25, 50, 100]);

/** The audit trail, newest first, filtered and paged. */
export async function auditPage(ctx: ApiContext, res: ServerResponse, query: URLSearchParams): Promise<void> {
  if (!ctx.auditPath) return ctx.json(res, 200, { entries: [], total: 0, page: 0, pages: 0, off: true });
  const time = (name: string) => {
    const value = query.get(name);
    if (!value) return undefined;
    if (Number.isNaN(Date.parse(value))) throw new BadRequest(`${name} must be a date or time, got ${JSON.stringify(value.slice(0, 60))}`);
    return value;
  };
  const all = await readAudit(ctx.auditPath, {
    sessionId: query.get("session") || undefined,
    tool: query.get("tool") || undefined,
    since: time("since"),
    until: time("until"),
    limit: Number.MAX_SAFE_INTEGER,
  });
  const outcome = query.get("outcome");
  const entries = (outcome ? all.filter((e) => e.outcome === outcome) : all).reverse();
  const size = PAGE_SIZES.has(Number(query.get("size"))) ? Number(query.get("size")) : 25;
  const pages = Math.max(1, Math.ceil(entries.length / size));
  const page = Math.min(pages - 1, Math.max(0, Math.trunc(Number(query.get("page") ?? 0)) || 0));
  ctx.json(res, 200, {
    entries: entries.slice(page * size, (page + 1) * size),
    total: entries.length,
    page,
    pages,
    size,
    tools: [...new Set(all.map((e) => e.tool))].sort(),
    outcomes: [...new Set(all.map((e) => e.outcome))].sort(),
  });
}

/** Allow once / always / reject (with a message), or answer / dismiss a question. */
export async function answer(ctx: ApiContext, res: ServerResponse, body: Record<string, unknown>): Promise<void> {
  const id = typeof body.id === "string" ? body.id : "";
  const request = ctx.store.pending.get(id);
  if (!request) return ctx.json(res, 404, { error: `no pending request ${JSON.stringify(id.slice(0, 80))}: it may be answered already` });
  const conductor = ctx.servers.conductor(request.server);
  if (!conductor) return ctx.json(res, 409, { error: "its server is not followed" });
  const message = typeof body.message === "string" && body.message.trim() ? body.message.trim().slice(0, 2_000) : undefined;
  let entry: Omit<AuditEntry, "time">;
  if (request.kind === "permission") {
    const decision = body.decision;
    if (decision !== "once" && decision !== "always" && decision !== "reject") throw new BadRequest('decision must be "once", "always" or "reject"');
    await conductor.answer({ requestId: id, sessionId: request.sessionId, decision, ...(decision === "reject" && message ? { message } : {}) });
    entry = {
      tool: "console",
      session_id: request.sessionId,
      decision,
      by: "human (console)",
      outcome: "ok",
      detail: { request_id: id, permission: request.permission, patterns: request.patterns },
    };
  } else {
    const answers = body.answers;
    const reject = body.decision === "reject";
    if (!reject && (!Array.isArray(answers) || !answers.every((a) => Array.isArray(a) && a.every((x) => typeof x === "string"))))
      throw new BadRequest("answers must be one list of labels per question");
    await conductor.answer({ questionId: id, sessionId: request.sessionId, ...(reject ? { reject: true } : { answers: answers as string[][] }) });
    entry = {
      tool: "console",
      session_id: request.sessionId,
      decision: reject ? "reject" : "answered",
      by: "human (console)",
      outcome: "ok",
      detail: { request_id: id, questions: request.questions.map((q) => q.question), ...(reject ? {} : { answers }) },
    };
  }
  await ctx.audit.append(entry);
  ctx.json(res, 200, { ok: true });
}

/** Stops a private instance that runs no turn (its owner's next call starts another). */
export async function stopInstance(ctx: ApiContext, res: ServerResponse, pid: number): Promise<void> {
  const row = ctx.servers.instanceRows().find((r) => r.pid === pid);
  if (!row) return ctx.json(res, 404, { error: `no private instance with pid ${pid} in the registry` });
  const conductor = ctx.servers.conductor(row.url);
  const busy = conductor
    ? await runningCount(
        conductor.engine.withDirectory(row.directory),
        row.sessions.map((s) => s.id),
      )
    : 0;
  if (busy > 0) return ctx.json(res, 409, { error: `the instance runs ${busy} session(s): interrupt them first` });
  await terminate(row.pid, 5_000);
  await new InstanceRegistry(ctx.stateDir).remove(row.pid).catch(() => undefined);
  await ctx.audit.append({
    tool: "console",
    by: "human (console)",
    decision: "stop",
    outcome: "ok",
    directory: row.directory,
    detail: { instance_pid: row.pid, url: row.url },
  });
  ctx.json(res, 200, { ok: true });
}

/** How many of the instance's sessions (by the registry) the server says are working; 0 when it does not answer. */
async function runningCount(engine: Engine, sessionIds: string[]): Promise<number> {
  const states = await Promise.all(sessionIds.map((id) => engine.runState(id).catch(() => ({ type: "idle" as const }))));
  return states.filter((s) => s.type !== "idle").length;
}
