// Permission requests and questions on opencode 1.x, which keeps them at /permission and /question
// (docs/opencode-behaviour.md §5): read into the core's PendingRequest, and answered.
import type { OpencodeClient } from "../../../client/connect.js";
import type { Schemas } from "../../../client/types.js";
import { UsageError } from "../../errors.js";
import type { AnswerPermission, AnswerQuestion, PendingPermission, PendingQuestion, PendingRequest } from "../../model/pending-request.js";

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
