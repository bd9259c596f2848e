// Core errors name the library's option names (`sessionId`, `messageId` …), right for a TypeScript
// caller; a tool's caller spells the same inputs as the tools' fields (`session_id`, `message_id` …).
// Rewritten at the one place a core error becomes a tool's answer, so both read their own names.

/** Library option name → the tool input field that carries it. */
const TOOL_SPELLING: Record<string, string> = {
  sessionId: "session_id",
  messageId: "message_id",
  partId: "part_id",
  parentId: "parent_id",
  requestId: "request_id",
  // oc_answer takes a question's id in `request_id` too.
  questionId: "request_id",
};

const LIBRARY_NAMES = new RegExp(`\\b(?:${Object.keys(TOOL_SPELLING).join("|")})\\b`, "g");

/** `message` with every library option name replaced by the tool field's name. */
export function inToolTerms(message: string): string {
  return message.replace(LIBRARY_NAMES, (name) => TOOL_SPELLING[name] ?? name);
}
