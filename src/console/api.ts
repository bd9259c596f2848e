// The console's JSON and SSE endpoints. Reads go to the store, the state files or opencode through
// the core; the two writes (answer a request, stop an idle instance) act on opencode directly, so
// an MCP call waiting on the request goes on by itself, and each is audited as the console's.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Engine } from "../core/engine/engine.js";
import { type AuditLog, readAuditPage, type AuditEntry } from "../core/governance/audit.js";
import { UsageError } from "../core/errors.js";
import { terminate, InstanceRegistry } from "../core/instances/registry.js";
import { WorktreeRegistry } from "../core/worktrees/registry.js";
import { sessionDiff } from "../core/sessions/diff.js";
import { sessionScope } from "../core/sessions/scope.js";
import { fileDiffs } from "../core/worktrees/diff.js";
import { partView, type PartView } from "./parts.js";
import type { ConsoleFleet } from "./fleet.js";
import type { Servers } from "./servers.js";
import type { Store } from "./store.js";

export interface ApiContext {
  store: Store;
  servers: Servers;
  /** With a queue configured. */
  fleet?: ConsoleFleet;
  auditPath?: string;
  stateDir: string;
  audit: AuditLog;
  auditValues: AuditValues;
  /** Whether the audit trail and the task records can be written (checked every few seconds). */
  health(): TrailView[];
  /** Sends JSON with every known secret scrubbed. */
  json(res: ServerResponse, status: number, body: unknown): void;
  /** The same scrub for an SSE data line. */
  scrub(text: string): string;
}

export class BadRequest extends Error {}

/** A file's health as the page shows it; `text` says what is wrong in the words the MCP server uses. */
export interface TrailView {
  name: string;
  path: string;
  writable: boolean;
  text?: string;
}

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
  send("snapshot", { tasks: [...ctx.store.tasks.values()], pending: [...ctx.store.pending.values()], servers: ctx.servers.list(), health: ctx.health() });
  const unsubscribe = ctx.store.subscribe((change) => {
    if (change.type === "task") send("task", change.task);
    else if (change.type === "pending") send("pending", change.pending);
    else if (change.type === "servers") send("servers", ctx.servers.list());
    else if (change.type === "audit") send("audit", {});
    else if (change.type === "health") send("health", ctx.health());
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

/**
 * One task: its record, its transcript (every message of the session), the diff of its files (for
 * a worktree task: its branch against its base, read from git, which holds the task's work).
 */
export async function taskDetail(ctx: ApiContext, res: ServerResponse, id: string): Promise<void> {
  const task = ctx.store.tasks.get(id);
  if (!task) return ctx.json(res, 404, { error: `no task ${id.slice(0, 80)} in the state dir's task records` });
  const branch = task.worktree?.state === "finished" ? await branchDiff(ctx, id) : undefined;
  const conductor = ctx.servers.conductor(task.server);
  if (!conductor) return ctx.json(res, 200, { task, transcript: [], diff: branch ?? [], error: "its server is not followed" });
  try {
    const scope = await sessionScope(conductor, id);
    const messages = await scope.engine.messages(id);
    const transcript: PartView[] = messages.flatMap((m) => m.parts.flatMap((p) => partView(p as never, m.info.role) ?? []));
    const diff = branch ?? (task.files.length > 0 ? (await sessionDiff(conductor, id).catch(() => ({ files: [] }))).files : []);
    ctx.json(res, 200, { task, transcript, diff });
  } catch (error) {
    ctx.json(res, 200, { task, transcript: [], diff: branch ?? [], error: `opencode did not answer: ${(error as Error).message.slice(0, 200)}` });
  }
}

/** A finished worktree task's files, each with its patch, from the repository (none while it runs). */
async function branchDiff(
  ctx: ApiContext,
  sessionId: string,
): Promise<Array<{ file: string; status?: string; additions?: number; deletions?: number; patch?: string }> | undefined> {
  const row = await new WorktreeRegistry(ctx.stateDir).bySession(sessionId).catch(() => undefined);
  if (row?.state !== "finished" || !row.head) return undefined;
  const files = await fileDiffs(row.repo, row.base, row.head).catch(() => undefined);
  return files?.map(({ path, ...rest }) => ({ file: path, ...rest }));
}

const PAGE_SIZES = new Set([25, 50, 100]);
/** Tool names and outcomes offered as filters: at most this many of each. */
const MAX_VALUES = 200;

/** The tools and outcomes seen in the trail so far (the filters' choices), without reading it whole. */
export class AuditValues {
  readonly tools = new Set<string>();
  readonly outcomes = new Set<string>();

  add(entries: AuditEntry[]): void {
    for (const e of entries) {
      if (this.tools.size < MAX_VALUES) this.tools.add(e.tool);
      if (this.outcomes.size < MAX_VALUES) this.outcomes.add(e.outcome);
    }
  }
}

/**
 * One page of the audit trail, newest first, filtered: read from the trail's end (or the page's
 * `before` cursor) and never more than a bounded stretch of it, whatever the trail's size.
 */
export async function auditPage(ctx: ApiContext, res: ServerResponse, query: URLSearchParams): Promise<void> {
  if (!ctx.auditPath) return ctx.json(res, 200, { entries: [], off: true, tools: [], outcomes: [] });
  const time = (name: string) => {
    const value = query.get(name);
    if (!value) return undefined;
    if (Number.isNaN(Date.parse(value))) throw new BadRequest(`${name} must be a date or time, got ${JSON.stringify(value.slice(0, 60))}`);
    return value;
  };
  const size = PAGE_SIZES.has(Number(query.get("size"))) ? Number(query.get("size")) : 25;
  let page;
  try {
    page = await readAuditPage(ctx.auditPath, {
      sessionId: query.get("session") || undefined,
      tool: query.get("tool") || undefined,
      outcome: query.get("outcome") || undefined,
      since: time("since"),
      until: time("until"),
      before: query.get("before") || undefined,
      limit: size,
    });
  } catch (error) {
    if (error instanceof UsageError) throw new BadRequest(error.message);
    throw error;
  }
  ctx.auditValues.add(page.entries);
  ctx.json(res, 200, {
    entries: page.entries,
    ...(page.next ? { next: page.next } : {}),
    ...(page.reached ? { reached: page.reached } : {}),
    size,
    tools: [...ctx.auditValues.tools].sort(),
    outcomes: [...ctx.auditValues.outcomes].sort(),
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
      detail: { request_id: id, permission: request.permission, patterns: request.patterns, ...(request.task_id ? { task_id: request.task_id } : {}) },
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
      detail: {
        request_id: id,
        questions: request.questions.map((q) => q.question),
        ...(reject ? {} : { answers }),
        ...(request.task_id ? { task_id: request.task_id } : {}),
      },
    };
  }
  await ctx.audit.append(entry);
  ctx.json(res, 200, { ok: true });
}

/** The fleet's queue: its tasks (with worker and attempts), workers (load) and provider slots. */
export async function queueView(ctx: ApiContext, res: ServerResponse): Promise<void> {
  if (!ctx.fleet) return ctx.json(res, 200, { off: true });
  ctx.json(res, 200, await ctx.fleet.view());
}

/** Cancels a task of the queue: a queued one never starts, a running one is interrupted by its worker. */
export async function cancelQueued(ctx: ApiContext, res: ServerResponse, body: Record<string, unknown>): Promise<void> {
  if (!ctx.fleet) return ctx.json(res, 409, { error: "no queue: start the console with OPENCODE_CONDUCTOR_QUEUE" });
  const id = typeof body.id === "string" ? body.id : "";
  if (!/^[A-Za-z0-9._-]{1,120}$/.test(id)) throw new BadRequest("id must be a task id of the queue");
  const r = await ctx.fleet.cancel(id).catch((error: Error) => {
    if (error instanceof UsageError) throw new BadRequest(error.message);
    throw error;
  });
  await ctx.audit.append({
    tool: "console",
    by: "human (console)",
    decision: "cancel",
    outcome: r.status,
    detail: { task_id: id, was_running: r.was_running },
  });
  ctx.json(res, 200, { ok: true, ...r });
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
