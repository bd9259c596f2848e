// The four kinds of change an install makes, each computed from a file's current text so that it
// can be shown first (--dry-run), checked by parsing the result, and undone: our server entry in a
// JSON(C) or TOML config, a marked block in a Markdown context file, a whole file of ours.
import { holdsBlock, putBlock, takeBlock } from "./context-block.js";
import { sameValue, startsConductor, valueAt, type Tree } from "./entry-tree.js";
import { entryText, putEntry, readJsonDoc, takeEntry } from "./json-entry.js";
import { EditRefused } from "./refused.js";
import { hasOurBlock, putTomlEntry, readTomlDoc, takeTomlEntry, tomlEntryText } from "./toml-entry.js";

export type Edit =
  /** `secret`: the entry holds --env values, so the file is made 0600. */
  | { kind: "json"; path: string; key: string[]; value: Tree; secret?: boolean }
  /** `comment`: lines said above the table, in the marked block. */
  | { kind: "toml"; path: string; key: string[]; value: Tree; comment: string[]; secret?: boolean }
  | { kind: "block"; path: string; body: string }
  | { kind: "file"; path: string; text: string };

/** What an install wrote to a file, as the record keeps it. */
export interface Written {
  before: string | null;
  after: string;
}

/** How an uninstall leaves a file: its next text (null: delete it; undefined: as it is), and what to say. */
export interface Reverted {
  next: string | null | undefined;
  note?: string;
  /** Something of ours is still in the file. */
  left?: boolean;
}

const label = (edit: Edit & { key: string[] }) => (edit.kind === "toml" ? `[${edit.key.join(".")}]` : edit.key.map((k) => JSON.stringify(k)).join(" › "));
const read = (edit: Edit & { key: string[] }, text: string | undefined) => (edit.kind === "json" ? readJsonDoc(edit.path, text) : readTomlDoc(edit.path, text));

/** The file's text after the edit (`before` undefined: no file), or undefined when it already holds it. */
export function applyEdit(edit: Edit, before: string | undefined, force: boolean): string | undefined {
  switch (edit.kind) {
    case "json":
    case "toml": {
      const doc = read(edit, before);
      const existing = valueAt(doc.tree, edit.key);
      if (sameValue(existing, edit.value)) return undefined;
      if (existing !== undefined && !force) {
        throw new EditRefused(
          startsConductor(existing)
            ? `${edit.path} already has an opencode-conductor entry ${label(edit)} with other settings (another start command or --env): pass --force to replace it`
            : `${edit.path} already has an entry ${label(edit)} that does not start opencode-conductor: pass --force to replace it (uninstall puts it back), or remove it`,
        );
      }
      return edit.kind === "json"
        ? putEntry(edit.path, readJsonDoc(edit.path, before), edit.key, edit.value)
        : putTomlEntry(edit.path, readTomlDoc(edit.path, before), edit.key, edit.value, edit.comment);
    }
    case "block":
      return holdsBlock(before, edit.body) ? undefined : putBlock(edit.path, before, edit.body);
    case "file":
      if (before === edit.text) return undefined;
      if (before !== undefined && !force) throw new EditRefused(`${edit.path} exists with other content: pass --force to replace it`);
      return edit.text;
  }
}

/**
 * Takes our part out of a file. With the install's record: the exact bytes from before when the
 * file is as the install left it, else only our part (and the user's entry it replaced, put back).
 * Without one (lost, or another state dir): whatever of ours the file holds.
 */
export function revertEdit(edit: Edit, current: string, record?: Written): Reverted {
  if (record && current === record.after) return { next: record.before, note: record.before === null ? "delete" : "restore" };
  switch (edit.kind) {
    case "json":
    case "toml":
      return revertEntry(edit, current, record);
    case "block": {
      const next = takeBlock(edit.path, current, edit.body);
      if (next === current) return { next: undefined };
      // Nothing but our block was in it (the install created it, or the record is gone): it goes.
      if (next.trim() === "" && record?.before !== "") return { next: null, note: "delete" };
      return { next, note: "take our block out of" };
    }
    case "file":
      if (current === edit.text) return { next: record?.before ?? null, note: "delete" };
      return { next: undefined, note: record ? "changed since the install: left as is" : "not the file this version installs: left as is" };
  }
}

function revertEntry(edit: Edit & { kind: "json" | "toml" }, current: string, record?: Written): Reverted {
  const existing = valueAt(read(edit, current).tree, edit.key);
  if (existing === undefined) return { next: undefined };
  const recorded = record ? valueAt(read(edit, record.after).tree, edit.key) : undefined;
  const marked = edit.kind === "toml" && hasOurBlock(current);
  if (!startsConductor(existing) && !sameValue(existing, recorded) && !marked)
    return { next: undefined, note: `has an entry ${label(edit)} that does not start opencode-conductor: left as is` };
  const { next, restored } = edit.kind === "json" ? revertJson(edit, current, record) : revertToml(edit, current, record?.before ?? undefined);
  // A file the install created, now holding nothing: gone again.
  if (record?.before === null && isEmpty(edit, next)) return { next: null, note: "delete" };
  const note =
    restored === true
      ? "put back the entry from before the install in"
      : restored === false
        ? "take our entry out of (the entry from before the install could not be put back)"
        : "take our entry out of";
  return { next, note };
}

/** `restored`: whether the user's entry that the install replaced was put back (undefined: there was none). */
function revertJson(edit: Edit & { kind: "json" }, current: string, record: Written | undefined): { next: string; restored?: boolean } {
  const before = record?.before == null ? undefined : readJsonDoc(edit.path, record.before);
  const text = before && entryText(before, edit.key);
  // Only the record knows that the install added the parent too (without it, an empty one stays).
  const createdParent = record !== undefined && (!before || valueAt(before.tree, edit.key.slice(0, -1)) === undefined);
  const next = takeEntry(edit.path, readJsonDoc(edit.path, current), edit.key, text ? { text, tree: before.tree } : undefined, createdParent);
  return { next, restored: text ? true : undefined };
}

function revertToml(edit: Edit & { kind: "toml" }, current: string, earlier: string | undefined): { next: string; restored?: boolean } {
  const doc = readTomlDoc(edit.path, current);
  const text = earlier === undefined ? undefined : tomlEntryText(readTomlDoc(edit.path, earlier), edit.key);
  if (text) {
    try {
      return { next: takeTomlEntry(edit.path, doc, edit.key, edit.comment, text), restored: true };
    } catch {
      return { next: takeTomlEntry(edit.path, doc, edit.key, edit.comment), restored: false };
    }
  }
  return { next: takeTomlEntry(edit.path, doc, edit.key, edit.comment) };
}

function isEmpty(edit: Edit & { kind: "json" | "toml" }, text: string): boolean {
  const stripped = text.trim();
  return stripped === "" || (edit.kind === "json" && stripped.replace(/\s+/g, "") === "{}");
}
