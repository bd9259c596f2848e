// Permission requests and questions on opencode 2.x (docs/opencode-2x-behaviour.md "A blocked
// turn"), as the core's PendingRequest: a permission is `permission.asked {id, sessionID, action,
// resources, save}`; a question is a *form* (`form.created`, fields `q0…` with options), answered
// with `form.reply {answer: {q0: "blue"}}` and dismissed with `form.cancel`. The permission reply's
// field is `reply` on the pre-release and `decision` on 2.0.26: the route's own body properties
// say which (routes.ts), no version test.
import type { AnswerPermission, AnswerQuestion, PendingPermission, PendingQuestion, PendingRequest } from "../../model/pending-request.js";
import type { OpencodeV2Client } from "../../../client/v2/client.js";
import { quoted, UsageError } from "../../errors.js";

interface V2Permission {
  id: string;
  sessionID: string;
  action?: string;
  resources?: string[];
  save?: string[];
  metadata?: Record<string, unknown>;
  source?: unknown;
}

interface V2FormField {
  key: string;
  title?: string;
  description?: string;
  type?: string;
  options?: Array<{ value: string; label?: string; description?: string }>;
}

interface V2Form {
  id: string;
  sessionID: string;
  title?: string;
  metadata?: Record<string, unknown>;
  fields?: V2FormField[];
}

export function permissionFromV2(p: V2Permission): PendingPermission {
  return {
    kind: "permission",
    id: p.id,
    sessionId: p.sessionID,
    permission: p.action ?? "unknown",
    patterns: [...(p.resources ?? [])],
    always: [...(p.save ?? [])],
    metadata: { ...(p.metadata ?? {}), ...(p.source ? { source: p.source } : {}) },
  };
}

/** A form as a question: one question per field, its options as labels (any text is accepted where the field is free). */
export function questionFromForm(f: V2Form): PendingQuestion {
  return {
    kind: "question",
    id: f.id,
    sessionId: f.sessionID,
    questions: (f.fields ?? []).map((field) => ({
      question: field.description ?? field.title ?? field.key,
      ...(field.title ? { header: field.title } : {}),
      options: (field.options ?? []).map((o) => ({ label: o.label ?? o.value, ...(o.description ? { description: o.description } : {}) })),
      ...(field.type === "multiselect" || field.type === "array" ? { multiple: true } : {}),
    })),
  };
}

const dataOf = <T>(response: unknown): T[] => (response as { data?: T[] } | undefined)?.data ?? [];

export async function listPendingV2(client: OpencodeV2Client, sessionIds?: Iterable<string>): Promise<PendingRequest[]> {
  if (sessionIds) {
    const lists = await Promise.all(
      [...new Set(sessionIds)].map(async (sessionID) => {
        const [permissions, forms] = await Promise.all([
          client.request("permission.list", { path: { sessionID } }),
          client.request("form.list", { path: { sessionID } }),
        ]);
        return [...dataOf<V2Permission>(permissions).map(permissionFromV2), ...dataOf<V2Form>(forms).map(questionFromForm)];
      }),
    );
    return lists.flat();
  }
  const [permissions, forms] = await Promise.all([client.request("permission.requests", {}), client.request("form.requests", {})]);
  return [...dataOf<V2Permission>(permissions).map(permissionFromV2), ...dataOf<V2Form>(forms).map(questionFromForm)];
}

/** The session a request belongs to: given, or found among every pending one. */
async function sessionOfRequest(client: OpencodeV2Client, id: string, given: string | undefined): Promise<string> {
  if (given) return given;
  const found = (await listPendingV2(client)).find((r) => r.id === id);
  if (!found) throw new UsageError(`No pending request ${quoted(id)} on this opencode: it may be answered already. List open ones with oc_pending.`);
  return found.sessionId;
}

export async function answerPermissionV2(client: OpencodeV2Client, a: AnswerPermission): Promise<void> {
  const sessionID = await sessionOfRequest(client, a.requestId, a.sessionId);
  const field = client.routes.get("permission.reply").bodyProperties.includes("decision") ? "decision" : "reply";
  await client.request("permission.reply", {
    path: { sessionID, requestID: a.requestId },
    body: { [field]: a.decision, ...(a.message ? { message: a.message } : {}) },
  });
}

export async function answerQuestionV2(client: OpencodeV2Client, a: AnswerQuestion): Promise<void> {
  const sessionID = await sessionOfRequest(client, a.questionId, a.sessionId);
  const path = { sessionID, formID: a.questionId };
  if (a.reject) {
    await client.request("form.cancel", { path });
    return;
  }
  if (!a.answers || a.answers.length === 0) {
    throw new UsageError(
      'Answer a question with `answers` (one list of labels per question), or dismiss it with `reject: true` (oc_answer: `decision: "reject"`).',
    );
  }
  const form = ((await client.request("form.get", { path })) as { data?: V2Form } | undefined)?.data;
  const fields = form?.fields ?? [];
  if (a.answers.length > fields.length)
    throw new UsageError(`The question has ${fields.length} part(s) but ${a.answers.length} answers were given: give one list of labels per question.`);
  const answer: Record<string, unknown> = {};
  for (const [i, field] of fields.entries()) {
    const chosen = (a.answers[i] ?? []).map((label) => field.options?.find((o) => o.label === label)?.value ?? label);
    if (chosen.length === 0) continue;
    answer[field.key] = field.type === "multiselect" || field.type === "array" ? chosen : chosen.join(", ");
  }
  await client.request("form.reply", { path, body: { answer } });
}
