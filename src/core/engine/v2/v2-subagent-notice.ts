// opencode 2.x's notice that a background sub-agent ended (docs/opencode-2x-behaviour.md "A blocked
// turn", sub-agents). A `subagent` call with `background: true` returns at once and the parent's
// execution goes on and may end; when the child ends, opencode admits a `synthetic` input into the
// parent (`metadata: {source: "subagent", childID, agent, state}`), which starts an execution of its
// own (or joins the running one) and which the parent's agent answers. So it is a prompt, written by
// opencode: the replies after it answer it, not the prompt before it, which had its own outcome
// already (1.x writes its notice as a user message, the same thing). Other synthetic messages (the
// instructions opencode loads mid-step) carry a turn on and stay skipped.

/** A 2.x message (`{type, metadata}`) or admitted input (`{type, data: {metadata}}`) that is such a notice. */
export function isSubagentNotice(type: unknown, metadata: unknown): boolean {
  return type === "synthetic" && (metadata as { source?: unknown } | null | undefined)?.source === "subagent";
}

/** A 2.x message that starts a turn: a user's prompt, or opencode's notice of a background sub-agent's end. */
export function startsTurnV2(m: { type: string; metadata?: unknown }): boolean {
  return m.type === "user" || isSubagentNotice(m.type, m.metadata);
}
