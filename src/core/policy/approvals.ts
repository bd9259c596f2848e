// Permission requests and questions that block a session, and answering them (v1 engine: the
// high-level API drives v1 sessions, whose requests live at /permission and /question; docs/opencode-behaviour.md §5).
import type { OpencodeClient } from "../../client/connect.js";
import type { Schemas } from "../../client/types.js";
import { UsageError } from "../errors.js";

export interface PendingPermission {
  kind: "permission";
  id: string;
  sessionId: string;
  /** What the agent wants to do: `bash`, `edit`, `webfetch`, `external_directory` … */
  permission: string;
  /** What exactly, e.g. the command line or the file path. */
  patterns: string[];
  /** Patterns an `always` reply would approve from now on. */
  always: string[];
  metadata: Record<string, unknown>;
}

export interface PendingQuestion {
  kind: "question";
  id: string;
  sessionId: string;
  questions: Array<{ question: string; header?: string; options: Array<{ label: string; description?: string }>; multiple?: boolean }>;
}

export type PendingRequest = PendingPermission | PendingQuestion;

export function permissionFrom(p: Schemas["PermissionRequest"]): PendingPermission {
  return {
    kind: "permission",
    id: p.id,
    sessionId: p.sessionID,
    permission: p.permission,
    patterns: [...(p.patterns ?? [])],
    always: [...(p.always ?? [])],
    metadata: { ...(p.metadata ?? {}) },
  };
}

export function questionFrom(q: Schemas["QuestionRequest"]): PendingQuestion {
  return {
    kind: "question",
    id: q.id,
    sessionId: q.sessionID,
    questions: q.questions.map((x) => ({
      question: x.question,
      header: x.header,
      options: x.options.map((o) => ({ label: o.label, description: o.description })),
      multiple: x.multiple,
    })),
  };
}

/** Open permission requests and questions, optionally only those of some sessions. */
export async function listPending(client: OpencodeClient, sessionIds?: Iterable<string>): Promise<PendingRequest[]> {
  const [permissions, questions] = await Promise.all([client.call("permission.list"), client.call("question.list")]);
  const wanted = sessionIds ? new Set(sessionIds) : undefined;
  const all: PendingRequest[] = [...permissions.map(permissionFrom), ...questions.map(questionFrom)];
  return wanted ? all.filter((r) => wanted.has(r.sessionId)) : all;
}

export type PermissionDecision = "once" | "always" | "reject";

export interface AnswerPermission {
  requestId: string;
  /** The session that asked: requests live per project directory, and this finds it. */
  sessionId?: string;
  decision: PermissionDecision;
  /** With `reject`: feedback for the agent, which then continues instead of stopping. */
  message?: string;
}

export interface AnswerQuestion {
  questionId: string;
  /** The session that asked (see {@link AnswerPermission.sessionId}). */
  sessionId?: string;
  /** One list of chosen labels per question (free text is allowed too). */
  answers?: string[][];
  /** Dismiss the question instead of answering; the agent's turn then stops. */
  reject?: boolean;
}

export async function answerPermission(client: OpencodeClient, a: AnswerPermission): Promise<void> {
  await client.call("permission.reply", {
    path: { requestID: a.requestId },
    body: { reply: a.decision, ...(a.message ? { message: a.message } : {}) },
  });
}

export async function answerQuestion(client: OpencodeClient, a: AnswerQuestion): Promise<void> {
  if (a.reject) {
    await client.call("question.reject", { path: { requestID: a.questionId } });
    return;
  }
  if (!a.answers || a.answers.length === 0) {
    throw new UsageError("Answer a question with `answers` (one list of labels per question), or dismiss it with `reject: true`.", "answer");
  }
  await client.call("question.reply", { path: { requestID: a.questionId }, body: { answers: a.answers } });
}

/** One line saying what a request wants, for progress and BLOCKED answers. */
export function describeRequest(r: PendingRequest): string {
  if (r.kind === "permission") return `permission ${r.permission}: ${r.patterns.join(", ") || "(no pattern)"}`;
  return `question: ${r.questions.map((q) => `${q.question} [${q.options.map((o) => o.label).join(" | ")}]`).join("; ")}`;
}
