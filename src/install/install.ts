// `opencode-conductor install|uninstall --client X [--scope user|project] [--dry-run] [--force]`.
// An install remembers, per client and scope, each file's text before and after (in the state
// dir, mode 0600), so `uninstall` puts back the very bytes that were there; a file changed since
// gets only our part taken out, and without the record uninstall still finds our entries.
// Every change is planned and checked (parsed again) before the first file is written; a failed
// write puts back what was written and leaves the record as it was.
import { readdir, rmdir } from "node:fs/promises";
import { dirname } from "node:path";
import { quoted } from "../core/errors.js";
import { ensureStateDir, readJson, writeJsonAtomic, writeTextAtomic } from "../core/state-dir.js";
import { applyEdit, revertEdit, type Edit, type Written } from "./edits.js";
import { detectLaunch, type Launch } from "./launch-command.js";
import { changedLines } from "./preview.js";
import { EditRefused } from "./refused.js";
import { CLIENTS, targetFor, type Client, type Places, type Scope } from "./targets.js";
import { readText, removeClientFile, writeClientFile } from "./write.js";

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

type RememberedFile = Written & { path: string; edit: Edit };

interface Remembered {
  client: Client;
  scope: Scope;
  files: RememberedFile[];
}

export class InstallError extends Error {
  override name = "InstallError";
}

export interface Uninstalled {
  report: string;
  /** False when something of ours could not be taken out (the report says where). */
  complete: boolean;
}

function checked(o: Pick<InstallOptions, "client" | "scope">): { client: Client; scope: Scope } {
  if (!(CLIENTS as readonly string[]).includes(o.client)) throw new InstallError(`Unknown client ${quoted(o.client, 40)}: use one of ${CLIENTS.join(", ")}.`);
  const scope = o.scope ?? "user";
  if (scope !== "user" && scope !== "project") throw new InstallError(`Unknown scope ${quoted(scope, 40)}: use user or project.`);
  return { client: o.client as Client, scope };
}

const manifestPath = (stateDir: string) => `${stateDir}/installs.json`;

async function remembered(stateDir: string): Promise<Remembered[]> {
  try {
    return (await readJson<{ installs: Remembered[] }>(manifestPath(stateDir), { installs: [] })).installs;
  } catch (error) {
    throw new InstallError(`${manifestPath(stateDir)} cannot be read (${(error as Error).message.slice(0, 200)}): move it away, then run this again`);
  }
}

function target(client: Client, scope: Scope, launch: Launch, places: Places, env?: Record<string, string>) {
  try {
    return targetFor(client, scope, launch, places, env);
  } catch (error) {
    throw new InstallError((error as Error).message);
  }
}

/** Each file the edits change, with its text before and after; none when everything is in place. */
async function plan(edits: Edit[], force: boolean): Promise<RememberedFile[]> {
  const planned: RememberedFile[] = [];
  for (const edit of edits) {
    const before = await readText(edit.path).catch((error: Error) => {
      throw new InstallError(`cannot read ${edit.path} (${error.message.slice(0, 200)}): nothing was changed`);
    });
    try {
      const after = applyEdit(edit, before, force);
      if (after !== undefined) planned.push({ path: edit.path, before: before ?? null, after, edit });
    } catch (error) {
      if (error instanceof EditRefused) throw new InstallError(error.message);
      throw error;
    }
  }
  return planned;
}

/** Returns the report printed to the user. */
export async function install(o: InstallOptions): Promise<string> {
  const { client, scope } = checked(o);
  const chosen = target(client, scope, o.launch, o.places, o.env);
  const planned = await plan(chosen.edits, o.force === true);
  if (planned.length === 0) return `opencode-conductor is already installed for ${client} (${scope} scope): nothing to change.`;
  const lines = [
    `${o.dryRun ? "Would install" : "Installed"} opencode-conductor for ${client} (${scope} scope), started as: ${[o.launch.command, ...o.launch.args].join(" ")} (${o.launch.how}).`,
  ];
  if (o.dryRun) return [...lines, ...(await preview(planned, client, scope, o))].join("\n");

  await ensureStateDir(o.stateDir);
  const all = await remembered(o.stateDir);
  const earlier = all.find((r) => r.client === client && r.scope === scope);
  // A repeated install keeps the oldest "before": uninstall goes back to what was there first.
  const files = planned.map((f) => ({ ...f, before: earlier?.files.find((e) => e.path === f.path)?.before ?? f.before }));
  const record = { client, scope, files: [...(earlier?.files.filter((e) => !files.some((f) => f.path === e.path)) ?? []), ...files] };
  const previousRecord = await readText(manifestPath(o.stateDir));
  // The record first: files written without it could not be put back exactly.
  await writeJsonAtomic(manifestPath(o.stateDir), { installs: [...all.filter((r) => r !== earlier), record] }).catch((error: Error) => {
    throw new InstallError(`cannot write ${manifestPath(o.stateDir)} (${error.message.slice(0, 200)}): nothing was changed`);
  });
  const done: RememberedFile[] = [];
  for (const f of planned) {
    try {
      const note = await writeClientFile(f.path, f.after, "secret" in f.edit && f.edit.secret === true);
      done.push(f);
      lines.push(`  ${f.before === null ? "create" : "update"} ${f.path}${note ? ` (${note})` : ""}`);
    } catch (error) {
      const unrestored = await rollBack([...done, f], manifestPath(o.stateDir), previousRecord, bases(o.places));
      throw new InstallError(
        `cannot write ${f.path} (${(error as Error).message.slice(0, 200)})` +
          (unrestored.length === 0 ? ": nothing was changed" : `, and could not put back ${unrestored.join("; ")}`),
      );
    }
  }
  lines.push(
    ...chosen.notes.map((n) => `  ${n}`),
    `  Undo with: opencode-conductor uninstall --client ${client}${scope === "project" ? " --scope project" : ""}`,
  );
  return lines.join("\n");
}

/** Puts back what an install wrote (and the folders it made); returns what could not be put back, and why. */
async function rollBack(written: RememberedFile[], manifest: string, previousRecord: string | undefined, bases: string[]): Promise<string[]> {
  const failed: string[] = [];
  const attempt = (what: string, work: Promise<unknown>) => work.catch((error: Error) => void failed.push(`${what} (${error.message.slice(0, 200)})`));
  for (const f of written.reverse()) {
    if (f.before === null) {
      await attempt(f.path, removeClientFile(f.path));
      await pruneEmptyDirs(dirname(f.path), bases);
    } else if ((await readText(f.path).catch(() => undefined)) !== f.before) await attempt(f.path, writeClientFile(f.path, f.before, false));
  }
  await attempt(manifest, previousRecord === undefined ? removeClientFile(manifest) : writeTextAtomic(manifest, previousRecord));
  return failed;
}

const bases = (places: Places) => [places.home, places.project, places.xdgConfig];

/**
 * The dry run's report: each config file's change line by line, computed as the install computes
 * it but with --env values whose names look secret shown as ***. The skill is named, not shown.
 */
async function preview(planned: RememberedFile[], client: Client, scope: Scope, o: InstallOptions): Promise<string[]> {
  const masked = Object.fromEntries(Object.entries(o.env ?? {}).map(([k, v]) => [k, /PASSWORD|TOKEN|SECRET|KEY/i.test(k) && v ? "***" : v]));
  const shown = await plan(target(client, scope, o.launch, o.places, masked).edits, o.force === true);
  const lines = planned.map((f) => `  ${f.before === null ? "create" : "update"} ${f.path}`);
  for (const f of shown) {
    const what =
      f.edit.kind === "json" || f.edit.kind === "toml"
        ? changedLines(f.before, f.after)
        : `(the delegation skill, ${f.after.split("\n").length - (f.before?.split("\n").length ?? 1)} lines${f.edit.kind === "block" ? " in a marked block" : ""})`;
    lines.push("", `--- ${f.path}`, what);
  }
  return lines;
}

export async function uninstall(o: Omit<InstallOptions, "launch" | "force"> & { launch?: Launch }): Promise<Uninstalled> {
  const { client, scope } = checked(o);
  const all = await remembered(o.stateDir);
  const entry = all.find((r) => r.client === client && r.scope === scope);
  // Without a record (lost, or another state dir) the files this version would write are searched.
  let current: Edit[] = [];
  try {
    current = targetFor(client, scope, o.launch ?? detectLaunch(), o.places).edits;
  } catch {
    // codex has no project scope: there is nothing of ours to look for
  }
  const visits = [
    ...(entry?.files ?? []).map((f) => ({ edit: current.find((e) => e.path === f.path) ?? f.edit, record: f as Written | undefined })),
    ...current.filter((e) => !entry?.files.some((f) => f.path === e.path)).map((edit) => ({ edit, record: undefined })),
  ];
  const lines: string[] = [];
  const left: string[] = [];
  for (const { edit, record } of visits) {
    try {
      const text = await readText(edit.path);
      if (text === undefined) {
        if (record) lines.push(`  ${edit.path} is gone already`);
        continue;
      }
      const reverted = revertEdit(edit, text, record);
      if (reverted.next === undefined) {
        if (reverted.note) lines.push(`  ${edit.path}: ${reverted.note}`);
        continue;
      }
      lines.push(`  ${reverted.note ?? "update"} ${edit.path}`);
      if (o.dryRun) continue;
      if (reverted.next === null) {
        await removeClientFile(edit.path);
        await pruneEmptyDirs(dirname(edit.path), bases(o.places));
      } else await writeClientFile(edit.path, reverted.next, false);
    } catch (error) {
      const why = error instanceof EditRefused ? error.message : `cannot change ${edit.path} (${(error as Error).message.slice(0, 200)})`;
      lines.push(`  left: ${why}`);
      left.push(edit.path);
    }
  }
  if (!o.dryRun && entry) {
    // What could not be taken out stays in the record, for the next uninstall.
    const kept = entry.files.filter((f) => left.includes(f.path));
    await writeJsonAtomic(manifestPath(o.stateDir), {
      installs: [...all.filter((r) => r !== entry), ...(kept.length > 0 ? [{ ...entry, files: kept }] : [])],
    }).catch((error: Error) => {
      lines.push(`  left: cannot update ${manifestPath(o.stateDir)} (${error.message.slice(0, 200)})`);
      left.push(manifestPath(o.stateDir));
    });
  }
  const changed = lines.some((l) => !l.startsWith("  left:") && !l.endsWith("left as is") && !l.endsWith("is gone already"));
  if (!entry && !changed && left.length === 0)
    return { report: [`opencode-conductor is not installed for ${client} (${scope} scope): nothing to undo.`, ...lines].join("\n"), complete: true };
  const head = `${o.dryRun ? "Would remove" : "Removed"} opencode-conductor from ${client} (${scope} scope)${entry ? "" : " (no install record: found by looking)"}:`;
  return { report: [head, ...lines].join("\n"), complete: left.length === 0 };
}

/** Folders the install created for a file, once empty again, up to (not including) a base folder. */
async function pruneEmptyDirs(dir: string, bases: string[]): Promise<void> {
  while (!bases.includes(dir) && dir !== dirname(dir)) {
    if ((await readdir(dir).catch(() => ["?"])).length > 0) return;
    await rmdir(dir).catch(() => undefined);
    dir = dirname(dir);
  }
}
