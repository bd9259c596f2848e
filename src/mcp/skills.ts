// The delegation skill over MCP (the `io.modelcontextprotocol/skills` extension of SDK v2): the
// package's own skills/ folder (skills/opencode-delegate/SKILL.md, the one source the installs
// render too) served as `skills/list`, `skills/get` and `skill://opencode-delegate/SKILL.md`, so a
// client that reads skills over MCP gets it without an install step. Read once per process, on the
// first request that needs it (lazy-skills.ts); every server serves the same catalog.
import { join } from "node:path";
import type { SkillCatalog } from "@modelcontextprotocol/server/ext/skills";
import { loadSkills } from "@modelcontextprotocol/server/ext/skills/node";
import { packageRoot } from "../install/package-root.js";

let catalog: Promise<SkillCatalog> | undefined;

/** The catalog of the package's skills; a problem with one (a bad front matter) is reported to `warn`. */
export function packageSkills(warn: (message: string) => void = () => undefined): Promise<SkillCatalog> {
  catalog ??= loadSkills(join(packageRoot(), "skills"), { onWarning: (w) => warn(`${w.path}: ${w.message}`) });
  return catalog;
}
