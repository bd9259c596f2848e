// The server instructions (sent once at initialize), built from the tool definitions: each tool
// may carry the lines a client reads about it (`guide`); a server says only what its own tools
// (toolsets, read-only mode) can do, in tools/list order, then what the shared fields mean.
// docs/tools.md shows them for the default toolsets (`npm run docs:tools`).
import type { ToolDef } from "./tool-def.js";

const HEAD = "opencode-conductor hands coding work to opencode agents.";

/** The delegation skill as the server serves it (skills.ts); the guidance too long for tools/list. */
export const SKILL_URI = "skill://opencode-delegate/SKILL.md";
const SKILL_POINTER = `How to brief an agent, choose a model and check its work: resources/read ${SKILL_URI}.`;

// Said once here instead of in every schema: every client pays for tools/list in context.
const SHARED_FIELDS =
  'Shared fields: directory is an absolute project path (default: the server\'s). model is provider/model[#variant] or a name from oc_models. timeout_s (default 600, at most 3000; keep it below your client\'s timeout) is how long a call waits before answering "running". detail: final (answer only), summary (default: plus tools, files, tokens), full (plus transcript). approvals: elicit (ask your user; default when supported), return (answer "blocked"), deny. interrupt_on_cancel: cancelling the call also stops the agent. max_tokens / max_cost_usd cap spend: past them the agent is interrupted ("budget_exceeded").';

/** `skill`: the server serves the delegation skill, so the instructions point to it. */
export function instructionsFor(tools: readonly Pick<ToolDef, "guide">[], skill = false): string {
  return [HEAD, ...tools.flatMap((t) => t.guide ?? []).map((line) => `- ${line}`), ...(skill ? [`- ${SKILL_POINTER}`] : []), SHARED_FIELDS].join("\n");
}
