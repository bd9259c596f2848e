// `opencode-conductor install|uninstall --client X [--scope user|project] [--dry-run] [--force]`.
// An install remembers, per client and scope, each file's text before and after (in the state
// dir, mode 0600), so `uninstall` puts back the very bytes that were there; a file changed since
// gets only our part taken out.
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rm, rmdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { quoted } from "../core/errors.js";
import { ensureStateDir, readJson, writeJsonAtomic } from "../core/state-dir.js";
import { applyEdit, EditConflict, holds, revertEdit, type Edit } from "./edits.js";
import type { Launch } from "./launch.js";
import { CLIENTS, targetFor, type Client, type Places, type Scope } from "./targets.js";

export interface InstallOptions {
  client: string;
  scope?: string;
  dryRun?: boolean;
  force?: boolean;
  launch: Launch;
  places: Places;
  /** Variables written into the entry for the server (KEY=VALUE pairs from --env). */
  env?: Record<string, string>;
  /** Where installs are remembered (installs.json). */
  stateDir: string;
}

interface Remembered {
  client: Client;
  scope: Scope;
  files: Array<{ path: string; before: string | null; after: string; edit: Edit }>;
}

export class InstallError extends Error {
  override name = "InstallError";
}

function checked(o: Pick<InstallOptions, "client" | "scope">): { client: Client; scope: Scope } {
  if (!(CLIENTS as readonly string[]).includes(o.client)) throw new InstallError(`Unknown client ${quoted(o.client, 40)}: use one of ${CLIENTS.join(", ")}.`);
  const scope = o.scope ?? "user";
  if (scope !== "user" && scope !== "project") throw new InstallError(`Unknown scope ${quoted(scope, 40)}: use user or project.`);
  return { client: o.client as Client, scope };
}

const readText = async (path: string) => (existsSync(path) ? readFile(path, "utf8") : undefined);
const manifestPath = (stateDir: string) => `${stateDir}/installs.json`;

async function remembered(stateDir: string): Promise<Remembered[]> {
  return (await readJson<{ installs: Remembered[] }>(manifestPath(stateDir), { installs: [] })).installs;
}

/** Returns the report printed to the user. */
export async function install(o: InstallOptions): Promise<string> {
  const { client, scope } = checked(o);
  let target;
  try {
    target = targetFor(client, scope, o.launch, o.places, o.env);
  } catch (error) {
    throw new InstallError((error as Error).message);
  }
  const planned: Remembered["files"] = [];
  for (const edit of target.edits) {
    const before = await readText(edit.path);
    if (holds(edit, before) && !o.force) continue;
    try {
      planned.push({ path: edit.path, before: before ?? null, after: applyEdit(edit, before, o.force === true), edit });
    } catch (error) {
      if (error instanceof EditConflict) throw new InstallError(error.message);
      throw error;
    }
  }
  const lines = [
    `${o.dryRun ? "Would install" : "Installed"} opencode-conductor for ${client} (${scope} scope), started as: ${[o.launch.command, ...o.launch.args].join(" ")} (${o.launch.how}).`,
  ];
  if (planned.length === 0) return `opencode-conductor is already installed for ${client} (${scope} scope): nothing to change.`;
  for (const f of planned) lines.push(`${f.before === null ? "  create" : "  update"} ${f.path}`);
  if (o.dryRun) {
    for (const f of planned) {
      const shown =
        f.edit.kind === "json"
          ? JSON.stringify({ [f.edit.key.join(".")]: f.edit.value }, null, 2)
          : f.edit.kind === "block" && f.edit.comment === "#"
            ? f.edit.body
            : `(the delegation skill, ${(f.edit.kind === "file" ? f.edit.text : f.edit.body).length} characters${f.edit.kind === "block" ? ", in a marked block" : ""})`;
      lines.push("", `--- ${f.path}`, shown);
    }
    return hideSecrets(lines.join("\n"), o.env);
  }
  for (const f of planned) {
    await mkdir(dirname(f.path), { recursive: true });
    await writeFile(f.path, f.after);
  }
  await ensureStateDir(o.stateDir);
  const others = (await remembered(o.stateDir)).filter((r) => r.client !== client || r.scope !== scope);
  const earlier = (await remembered(o.stateDir)).find((r) => r.client === client && r.scope === scope);
  // A repeated install keeps the oldest "before": uninstall goes back to what was there first.
  const files = planned.map((f) => ({ ...f, before: earlier?.files.find((e) => e.path === f.path)?.before ?? f.before }));
  await writeJsonAtomic(manifestPath(o.stateDir), {
    installs: [...others, { client, scope, files: [...(earlier?.files.filter((e) => !files.some((f) => f.path === e.path)) ?? []), ...files] }],
  });
  lines.push(
    ...target.notes.map((n) => `  ${n}`),
    `  Undo with: opencode-conductor uninstall --client ${client}${scope === "project" ? " --scope project" : ""}`,
  );
  return lines.join("\n");
}

export async function uninstall(o: Omit<InstallOptions, "launch" | "force">): Promise<string> {
  const { client, scope } = checked(o);
  const all = await remembered(o.stateDir);
  const entry = all.find((r) => r.client === client && r.scope === scope);
  if (!entry) return `opencode-conductor is not installed for ${client} (${scope} scope) by this tool: nothing to undo.`;
  const lines = [`${o.dryRun ? "Would remove" : "Removed"} opencode-conductor from ${client} (${scope} scope):`];
  for (const f of entry.files) {
    const current = await readText(f.path);
    let next: string | undefined | null;
    if (current === undefined)
      next = undefined; // gone already
    else if (current === f.after)
      next = f.before; // untouched since: the exact bytes from before
    else next = revertEdit(f.edit, current, f.after) ?? null; // changed since: only our part goes
    if (current === undefined) {
      lines.push(`  ${f.path} is gone already`);
      continue;
    }
    lines.push(
      next === null ? `  delete ${f.path}` : current === f.after ? `  restore ${f.path}` : `  take our entry out of ${f.path} (it changed since the install)`,
    );
    if (o.dryRun) continue;
    if (next === null || next === undefined) {
      await rm(f.path, { force: true });
      await pruneEmptyDirs(dirname(f.path), [o.places.home, o.places.project, o.places.xdgConfig]);
    } else await writeFile(f.path, next);
  }
  if (!o.dryRun) await writeJsonAtomic(manifestPath(o.stateDir), { installs: all.filter((r) => r !== entry) });
  return lines.join("\n");
}

/** Folders the install created for a file, once empty again, up to (not including) a base folder. */
async function pruneEmptyDirs(dir: string, bases: string[]): Promise<void> {
  while (!bases.includes(dir) && dir !== dirname(dir)) {
    if ((await readdir(dir).catch(() => ["?"])).length > 0) return;
    await rmdir(dir).catch(() => undefined);
    dir = dirname(dir);
  }
}

/** A dry run is shown on a terminal (and pasted into issues): a secret given with --env is not. */
function hideSecrets(text: string, env: Record<string, string> = {}): string {
  let out = text;
  for (const [key, value] of Object.entries(env)) {
    if (value && /PASSWORD|TOKEN|SECRET|KEY/i.test(key)) out = out.split(JSON.stringify(value).slice(1, -1)).join("***");
  }
  return out;
}
