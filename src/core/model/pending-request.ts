// What blocks a session until someone answers: a permission request or a question form, and the
// answers to them. Each engine maps its server's requests into these (engine/v1/, engine/v2/).

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

/** One line saying what a request wants, for progress and BLOCKED answers. */
export function describeRequest(r: PendingRequest): string {
  if (r.kind === "permission") return `permission ${r.permission}: ${r.patterns.join(", ") || "(no pattern)"}`;
  return `question: ${r.questions.map((q) => `${q.question} [${q.options.map((o) => o.label).join(" | ")}]`).join("; ")}`;
}
