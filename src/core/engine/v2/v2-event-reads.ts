// What the v2 engine reads of opencode 2.x's events: each kind it names and, per kind, the `data`
// fields it reads with the JSON type it expects. The engine's readers (V2_EVENT_READERS) are held
// to this table by test/unit/contract/v2-events.test.ts (a kind or `data.` field they name that is
// not listed fails it), and the table to each 2.x document's event schemas: so a release that
// renames a field the engine reads fails a test instead of a turn.

export type JsonType = "string" | "number" | "object" | "array" | "any";

/** The files that read events, relative to the repository root. */
export const V2_EVENT_READERS = [
  "src/client/v2/event-framing.ts",
  "src/core/engine/v2/v2-events.ts",
  "src/core/engine/v2/v2-signals.ts",
  "src/core/engine/v2/v2-seen-turn.ts",
] as const;

const step = { sessionID: "string", assistantMessageID: "string" } as const;
const stepEnd = { ...step, cost: "number", tokens: "object", files: "array", snapshot: "string" } as const;
const tool = { ...step, id: "string" } as const;

export const V2_EVENT_READS: Record<string, Record<string, JsonType>> = {
  "session.created": { sessionID: "string", parentID: "string" },
  "session.execution.started": { sessionID: "string" },
  "session.input.admitted": { sessionID: "string", inputID: "string", input: "object" },
  "session.input.promoted": { sessionID: "string", inputID: "string" },
  "session.step.started": { ...step, agent: "string", model: "object", snapshot: "string" },
  "session.step.ended": { ...stepEnd, finish: "string" },
  "session.step.failed": { ...stepEnd, error: "any" },
  "session.text.started": step,
  "session.text.ended": { ...step, text: "string" },
  "session.reasoning.started": step,
  "session.reasoning.ended": { ...step, text: "string" },
  "session.tool.input.started": { ...tool, name: "string" },
  "session.tool.called": { ...tool, input: "object" },
  "session.tool.success": { ...tool, content: "array", metadata: "object" },
  "session.tool.failed": { ...tool, content: "array", metadata: "object", error: "any" },
  "session.retry.scheduled": { sessionID: "string" },
  "session.idle": { sessionID: "string" },
  "session.status": { sessionID: "string", status: "object" },
  // A form's events carry the form, its session inside (client/v2/event-framing.ts sessionOf).
  "form.created": { form: "object" },
  "session.execution.succeeded": { sessionID: "string" },
  "session.execution.failed": { sessionID: "string", error: "any" },
  "session.execution.interrupted": { sessionID: "string", reason: "string" },
  // An automatic compaction that failed: its error is the interruption's (v2-events.ts).
  "session.compaction.failed": { sessionID: "string", error: "any" },
  // Kinds the replay of a followed turn knows carry no message change: only their name is read.
  "session.renamed": {},
  "session.moved": {},
  "session.agent.selected": {},
  "session.model.selected": {},
  "session.instructions.updated": {},
  "session.synthetic": {},
  "session.skill.activated": {},
  "session.shell.started": {},
  "session.shell.ended": {},
  "session.tool.input.ended": {},
  "session.tool.progress": {},
};

/**
 * Fields a reader takes when present and does without otherwise (v2-signals.ts names a tool call
 * from its `session.tool.input.started`; the pre-release's later tool events carry no `name`).
 * Absent is fine; present with another type is a difference.
 */
export const V2_EVENT_READS_IF_PRESENT: Record<string, Record<string, JsonType>> = {
  "session.tool.called": { name: "string" },
  "session.tool.success": { name: "string" },
  "session.tool.failed": { name: "string" },
};

/**
 * Kinds a reader names that no document in spec/ declares (the pre-release's usage event is
 * `session.usage.updated`, and not durable): the test holds this list to that, so it stays short.
 */
export const V2_EVENT_READS_UNDOCUMENTED: Record<string, Record<string, JsonType>> = {
  "session.usage.recorded": {},
};
