// An OpenAI-compatible model server on 127.0.0.1 that answers from a script, so opencode can run
// fully offline and a test decides every model answer. Steps are queued per model id or per
// opencode session (opencode sends `x-session-id`); every request is recorded for assertions.
import { EventEmitter } from "node:events";
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { reply } from "./scripted-model/respond.js";
import { describeStep, text, type Step } from "./scripted-model/steps.js";

export * from "./scripted-model/steps.js";

export const DEFAULT_MODEL_ID = "scripted";
export const TITLE_ANSWER = "Scripted title";
export const SUMMARY_ANSWER = "(scripted model: summary of the conversation so far)";
const TITLE_PROMPT = "You are a title generator";
// 1.x's compaction agent, and 2.x's compaction prompt (which may come as the first message instead of a system one).
const SUMMARY_PROMPTS = ["You are a context summarization agent", "Create a new anchored summary from the conversation history"];

/** Loose shape of a chat-completions request body. */
export interface ChatRequestBody {
  model?: string;
  messages?: Array<{ role: string; content?: unknown; [key: string]: unknown }>;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  tools?: unknown[];
  [key: string]: unknown;
}

/** chat: a normal agent call; title: opencode's title generator; summary: compaction. */
export type RequestKind = "chat" | "title" | "summary";

export interface ScriptedRequest {
  /** 0-based position in `requests`. */
  index: number;
  model: string;
  sessionId: string | undefined;
  kind: RequestKind;
  body: ChatRequestBody;
  headers: IncomingHttpHeaders;
  /** What answered: a step description, "default", "title" or "summary". */
  step: string;
  /** Epoch ms when the request arrived. */
  at: number;
  /** Set when the answer is over: epoch ms, and whether the client left before it finished. */
  endedAt?: number;
  clientClosed?: boolean;
}

export interface ScriptQueue {
  queue(...steps: Step[]): ScriptQueue;
  /** Requests this queue can still answer (a `times(n, …)` step counts n). */
  remaining(): number;
  clear(): void;
}

export interface RequestFilter {
  sessionId?: string;
  model?: string;
  kind?: RequestKind;
}

export interface ScriptedModel extends ScriptQueue {
  /** `http://127.0.0.1:PORT/v1` */
  readonly baseURL: string;
  readonly port: number;
  /** Queue for a model id (requests whose body says `model: id`). */
  for(modelId: string): ScriptQueue;
  /** Queue for one opencode session; takes priority over model queues. */
  forSession(sessionId: string): ScriptQueue;
  readonly requests: readonly ScriptedRequest[];
  requestsFor(sessionId: string): ScriptedRequest[];
  lastRequest(filter?: RequestFilter): ScriptedRequest | undefined;
  /** Resolves with the matching requests once there are at least `n` of them. */
  waitForRequests(n: number, options?: RequestFilter & { timeoutMs?: number }): Promise<ScriptedRequest[]>;
  /** Resolves once the answer to `request` is over (finished, or the client went away). */
  waitForEnd(request: ScriptedRequest, options?: { timeoutMs?: number }): Promise<ScriptedRequest>;
  /** Unanswered steps by queue (`model:<id>` / `session:<id>`), to assert a script was used up. */
  leftovers(): Record<string, string[]>;
  close(): Promise<void>;
}

interface Entry {
  step: Step;
  left: number;
}

class Queue implements ScriptQueue {
  readonly entries: Entry[] = [];
  queue(...steps: Step[]): ScriptQueue {
    for (const step of steps) this.entries.push({ step, left: step.repeat ?? 1 });
    return this;
  }
  remaining(): number {
    return this.entries.reduce((n, e) => n + e.left, 0);
  }
  clear(): void {
    this.entries.length = 0;
  }
  take(): Step | undefined {
    const head = this.entries[0];
    if (!head) return undefined;
    if (--head.left <= 0) this.entries.shift();
    return head.step;
  }
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => (p && typeof p === "object" && "text" in p ? String(p.text) : "")).join("");
  return "";
}

export function classify(body: ChatRequestBody): RequestKind {
  const system = (body.messages ?? []).filter((m) => m.role === "system").map((m) => contentText(m.content).trimStart());
  if (system.some((s) => s.startsWith(TITLE_PROMPT))) return "title";
  const first = contentText(body.messages?.[0]?.content).trimStart();
  if ([...system, first].some((s) => SUMMARY_PROMPTS.some((p) => s.startsWith(p)))) return "summary";
  return "chat";
}

function matches(r: ScriptedRequest, f: RequestFilter): boolean {
  return (
    (f.sessionId === undefined || r.sessionId === f.sessionId) && (f.model === undefined || r.model === f.model) && (f.kind === undefined || r.kind === f.kind)
  );
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** Resolve with `check()` once it returns a value, re-checking on each `event`. */
function waitFor<T>(events: EventEmitter, event: string, check: () => T | undefined, timeoutMs: number, describe: () => string): Promise<T> {
  const now = check();
  if (now !== undefined) return Promise.resolve(now);
  return new Promise((resolve, reject) => {
    const onEvent = () => {
      const value = check();
      if (value === undefined) return;
      cleanup();
      resolve(value);
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(describe()));
    }, timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      events.off(event, onEvent);
    };
    events.on(event, onEvent);
  });
}

export async function startScriptedModel(): Promise<ScriptedModel> {
  const modelQueues = new Map<string, Queue>();
  const sessionQueues = new Map<string, Queue>();
  const requests: ScriptedRequest[] = [];
  const events = new EventEmitter();
  events.setMaxListeners(0);
  const sockets = new Set<Socket>();
  const inFlight = new Set<AbortController>();
  let seq = 0;

  const queueFor = (map: Map<string, Queue>, key: string): Queue => {
    let q = map.get(key);
    if (!q) map.set(key, (q = new Queue()));
    return q;
  };

  // Session queue first, then the model's queue; title requests never consume a step.
  const pick = (kind: RequestKind, model: string, sessionId: string | undefined): [Step, string] => {
    if (kind === "title") return [text(TITLE_ANSWER), "title"];
    const step = (sessionId ? sessionQueues.get(sessionId)?.take() : undefined) ?? modelQueues.get(model)?.take();
    if (step) return [step, describeStep(step)];
    if (kind === "summary") return [text(SUMMARY_ANSWER), "summary"];
    const who = sessionId ? `model ${model}, session ${sessionId}` : `model ${model}`;
    return [text(`(scripted model: no step queued for ${who})`), "default"];
  };

  const handleCompletion = async (req: IncomingMessage, res: ServerResponse) => {
    // Listen for the client leaving from the start: it may go while the body is still arriving.
    const abort = new AbortController();
    inFlight.add(abort);
    // `let`: the close listener may run before the body is read and the request recorded.
    // eslint-disable-next-line prefer-const
    let record: ScriptedRequest | undefined;
    res.once("close", () => {
      inFlight.delete(abort);
      abort.abort();
      if (!record) return;
      record.endedAt = Date.now();
      record.clientClosed = !res.writableFinished;
      events.emit("end", record);
    });
    const raw = await readBody(req);
    let body: ChatRequestBody;
    try {
      body = JSON.parse(raw) as ChatRequestBody;
    } catch {
      return sendJson(res, 400, { error: { message: "request body is not JSON", type: "invalid_request_error", code: "bad_json" } });
    }
    const model = typeof body.model === "string" ? body.model : DEFAULT_MODEL_ID;
    const header = req.headers["x-session-id"];
    const sessionId = Array.isArray(header) ? header[0] : header;
    const kind = classify(body);
    const [step, description] = pick(kind, model, sessionId);
    record = { index: requests.length, model, sessionId, kind, body, headers: req.headers, step: description, at: Date.now() };
    requests.push(record);
    events.emit("request", record);
    if (abort.signal.aborted) {
      record.endedAt = record.at;
      record.clientClosed = true;
      events.emit("end", record);
      return;
    }
    await reply(step, res, {
      model,
      stream: body.stream === true,
      includeUsage: body.stream_options?.include_usage === true,
      promptTokens: Math.max(1, Math.ceil(JSON.stringify(body.messages ?? []).length / 4)),
      id: `chatcmpl-scripted-${++seq}`,
      seq,
      signal: abort.signal,
    });
  };

  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const work =
      req.method === "POST" && path === "/v1/chat/completions"
        ? handleCompletion(req, res)
        : req.method === "GET" && path === "/v1/models"
          ? Promise.resolve(
              sendJson(res, 200, {
                object: "list",
                data: [...new Set([DEFAULT_MODEL_ID, "backup", ...modelQueues.keys()])].map((id) => ({
                  id,
                  object: "model",
                  created: 0,
                  owned_by: "scripted",
                })),
              }),
            )
          : Promise.resolve(sendJson(res, 404, { error: { message: `no route ${req.method} ${path}`, type: "invalid_request_error", code: "not_found" } }));
    work.catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: String(error), type: "server_error", code: "scripted_model_bug" } });
      else res.destroy();
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const defaultQueue = () => queueFor(modelQueues, DEFAULT_MODEL_ID);
  let closing: Promise<void> | undefined;

  const model: ScriptedModel = {
    baseURL: `http://127.0.0.1:${port}/v1`,
    port,
    queue(...steps) {
      defaultQueue().queue(...steps);
      return model;
    },
    remaining: () => defaultQueue().remaining(),
    clear: () => defaultQueue().clear(),
    for: (modelId) => queueFor(modelQueues, modelId),
    forSession: (sessionId) => queueFor(sessionQueues, sessionId),
    requests,
    requestsFor: (sessionId) => requests.filter((r) => r.sessionId === sessionId),
    lastRequest: (filter = {}) => requests.filter((r) => matches(r, filter)).at(-1),
    waitForRequests(n, options = {}) {
      const { timeoutMs = 30_000, ...filter } = options;
      const matching = () => requests.filter((r) => matches(r, filter));
      return waitFor(
        events,
        "request",
        () => (matching().length >= n ? matching() : undefined),
        timeoutMs,
        () => {
          const seen = requests.map((r) => `${r.kind}/${r.model}/${r.sessionId ?? "-"}: ${r.step}`);
          return `scripted model: waited ${timeoutMs} ms for ${n} request(s) matching ${JSON.stringify(filter)}; saw ${matching().length}. All requests: ${JSON.stringify(seen)}`;
        },
      );
    },
    waitForEnd(request, options = {}) {
      const { timeoutMs = 30_000 } = options;
      return waitFor(
        events,
        "end",
        () => (request.endedAt !== undefined ? request : undefined),
        timeoutMs,
        () => {
          return `scripted model: request #${request.index} (${request.step}) still open after ${timeoutMs} ms`;
        },
      );
    },
    leftovers() {
      const out: Record<string, string[]> = {};
      const collect = (prefix: string, map: Map<string, Queue>) => {
        for (const [key, q] of map) {
          if (q.entries.length) out[`${prefix}:${key}`] = q.entries.map((e) => `${describeStep(e.step)}${e.left > 1 ? ` x${e.left}` : ""}`);
        }
      };
      collect("model", modelQueues);
      collect("session", sessionQueues);
      return out;
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const abort of inFlight) abort.abort(); // ends delays and hangs
        for (const socket of sockets) socket.destroy(); // keep-alive and hung connections
      });
      return closing;
    },
  };
  return model;
}
