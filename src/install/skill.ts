// The delegation skill: one source (skills/opencode-delegate/SKILL.md, Claude Code's skill format),
// rendered for the clients that take plain context files instead (AGENTS.md, GEMINI.md, a Cursor rule).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "./package-root.js";

export const SKILL_NAME = "opencode-delegate";

export function skillSource(root = packageRoot()): string {
  return readFileSync(join(root, "skills", SKILL_NAME, "SKILL.md"), "utf8");
}

/** The source without its front matter, for context files that are plain Markdown. */
export function skillBody(source = skillSource()): string {
  const match = /^---\n[\s\S]*?\n---\n+/.exec(source);
  return match ? source.slice(match[0].length) : source;
}

/** The `description` of the front matter: when to use the skill. */
export function skillDescription(source = skillSource()): string {
  return /^description: (.*)$/m.exec(source)?.[1]?.trim() ?? "";
}

/** A Cursor project rule (`.mdc`): its own front matter, then the same body. */
export function cursorRule(source = skillSource()): string {
  return `---\ndescription: ${skillDescription(source)}\nalwaysApply: false\n---\n\n${skillBody(source)}`;
}
