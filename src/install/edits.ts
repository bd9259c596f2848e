// The three kinds of change an install makes, each computed from a file's current text so that it
// can be shown first (--dry-run) and undone exactly: an entry in a JSON config, a marked block in a
// text file (TOML, Markdown), a whole file of ours.

export type Edit =
  | { kind: "json"; path: string; key: string[]; value: unknown }
  | { kind: "block"; path: string; comment: "#" | "html"; body: string }
  | { kind: "file"; path: string; text: string };

const MARK = "opencode-conductor";
const open = (c: "#" | "html") =>
  c === "#" ? `# >>> ${MARK} (remove with: opencode-conductor uninstall)` : `<!-- >>> ${MARK} (remove with: opencode-conductor uninstall) -->`;
const close = (c: "#" | "html") => (c === "#" ? `# <<< ${MARK}` : `<!-- <<< ${MARK} -->`);

export class EditConflict extends Error {
  override name = "EditConflict";
}

/** The file's text after the edit (`before` undefined: the file does not exist). */
export function applyEdit(edit: Edit, before: string | undefined, force: boolean): string {
  switch (edit.kind) {
    case "json": {
      const data = before?.trim() ? parseJson(before, edit.path) : {};
      let node = data;
      for (const k of edit.key.slice(0, -1)) {
        const next = node[k];
        if (next !== undefined && (typeof next !== "object" || next === null || Array.isArray(next)))
          throw new EditConflict(`${edit.path}: "${k}" is not an object`);
        node = (node[k] ??= {}) as Record<string, unknown>;
      }
      const last = edit.key.at(-1)!;
      if (node[last] !== undefined && JSON.stringify(node[last]) !== JSON.stringify(edit.value) && !force) {
        throw new EditConflict(`${edit.path} already has an entry "${edit.key.join(".")}": pass --force to replace it`);
      }
      node[last] = edit.value;
      return `${JSON.stringify(data, null, 2)}\n`;
    }
    case "block": {
      const text = removeBlock(before ?? "", edit.comment);
      const block = `${open(edit.comment)}\n${edit.body.trimEnd()}\n${close(edit.comment)}\n`;
      return text === "" ? block : `${text}${text.endsWith("\n") ? "" : "\n"}\n${block}`;
    }
    case "file":
      if (before !== undefined && before !== edit.text && !force) throw new EditConflict(`${edit.path} exists with other content: pass --force to replace it`);
      return edit.text;
  }
}

/** Takes the edit back out of a file someone changed since: the entry, the block, or (unchanged) our file. */
export function revertEdit(edit: Edit, current: string, written: string): string | undefined {
  switch (edit.kind) {
    case "json": {
      const data = parseJson(current, edit.path);
      let node: Record<string, unknown> | undefined = data;
      for (const k of edit.key.slice(0, -1)) node = node?.[k] as Record<string, unknown> | undefined;
      if (node) delete node[edit.key.at(-1)!];
      return `${JSON.stringify(data, null, 2)}\n`;
    }
    case "block":
      return removeBlock(current, edit.comment).replace(/\n\n$/, "\n");
    case "file":
      return current === written ? undefined : current;
  }
}

/** Whether the file already holds exactly this edit. */
export function holds(edit: Edit, current: string | undefined): boolean {
  if (current === undefined) return false;
  try {
    return (
      applyEdit(edit, current, false) === current ||
      (edit.kind === "block" && current.includes(`${open(edit.comment)}\n${edit.body.trimEnd()}\n${close(edit.comment)}`))
    );
  } catch {
    return false;
  }
}

function removeBlock(text: string, comment: "#" | "html"): string {
  const start = text.indexOf(open(comment));
  if (start < 0) return text;
  const end = text.indexOf(close(comment), start);
  if (end < 0) return text;
  const after = end + close(comment).length + (text[end + close(comment).length] === "\n" ? 1 : 0);
  // Also the blank line the install put before the block.
  const from = start >= 2 && text.slice(start - 2, start) === "\n\n" ? start - 1 : start;
  return text.slice(0, from) + text.slice(after);
}

function parseJson(text: string, path: string): Record<string, unknown> {
  try {
    const data = JSON.parse(text) as unknown;
    if (data && typeof data === "object" && !Array.isArray(data)) return data as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw new EditConflict(`${path} is not a JSON object: fix or move it, then run the install again`);
}
