// Our server entry in Codex's config.toml. No TOML library both edits and keeps a file's comments
// and layout (the round-trip ones are little used forks), so an edit is a minimal change to the
// text, guided and checked by two parsers: toml-eslint-parser's syntax tree says which lines define
// the entry (a table, its sub-tables, dotted keys), and smol-toml (a strict, spec-compliant TOML 1.1
// parser, which like Codex's refuses e.g. an integer beyond 64 bits) parses the result before it is written: it
// must hold exactly our entry, and everything else as before.
import { parse, stringify, type TomlTable } from "smol-toml";
import { parseTOML, type AST } from "toml-eslint-parser";
import { plain, sameApartFrom, sameValue, valueAt, type Tree } from "./entry-tree.js";
import { EditRefused } from "./refused.js";

const OPEN = "# >>> opencode-conductor (remove with: opencode-conductor uninstall)";
const CLOSE = "# <<< opencode-conductor";

/** Whether the text has the start of our marked block. */
export const hasOurBlock = (text: string) => text.split(/\r?\n/).includes(OPEN);

export interface TomlDoc {
  tree: Tree;
  text: string;
  ast: AST.TOMLProgram;
}

export function readTomlDoc(path: string, text: string | undefined): TomlDoc {
  const source = text ?? "";
  try {
    // Big integers as bigint: compared exactly, never rounded (nothing here writes them back).
    const tree = plain(parse(source, { integersAsBigInt: "asNeeded" })) as Tree;
    return { tree, text: source, ast: parseTOML(source, { tomlVersion: "1.1" }) };
  } catch (error) {
    const why = ((error as Error).message.split("\n")[0] ?? "").slice(0, 200);
    throw new EditRefused(`${path} is not valid TOML (${why}): fix it, then run this again`);
  }
}

/** Where the entry is defined: whole lines (first to last, line indexes), or inside an inline table. */
interface Found {
  lines: Set<number>;
  /** 1-based line of an inline table that holds the entry: no line of it can be taken out alone. */
  inline?: number;
}

function findEntry(doc: TomlDoc, key: string[]): Found {
  const lineOf = (offset: number) => doc.text.slice(0, offset).split("\n").length - 1;
  const found: Found = { lines: new Set() };
  const take = (node: { range: [number, number] }) => {
    for (let l = lineOf(node.range[0]); l <= lineOf(node.range[1]); l++) found.lines.add(l);
  };
  const startsWith = (path: (string | number)[], prefix: (string | number)[]) => prefix.every((k, i) => path[i] === k);
  const keyValues = (kvs: AST.TOMLKeyValue[], base: (string | number)[]) => {
    for (const kv of kvs) {
      const path = [...base, ...kv.key.keys.map((k) => (k.type === "TOMLBare" ? k.name : k.value))];
      if (startsWith(path, key)) take(kv);
      else if (startsWith(key, path) && kv.value.type === "TOMLInlineTable") found.inline ??= lineOf(kv.range[0]) + 1;
    }
  };
  const top = doc.ast.body[0];
  keyValues(
    top.body.filter((n): n is AST.TOMLKeyValue => n.type === "TOMLKeyValue"),
    [],
  );
  for (const table of top.body.filter((n): n is AST.TOMLTable => n.type === "TOMLTable")) {
    if (startsWith(table.resolvedKey, key)) take(table);
    else keyValues(table.body, table.resolvedKey);
  }
  return found;
}

/** The marked block as the install writes it, in the file's line ends. */
function tomlBlock(key: string[], value: Tree, comment: string[], eol: string): string {
  let table: TomlTable = value as TomlTable;
  for (const k of [...key].reverse()) table = { [k]: table };
  const lines = [OPEN, ...comment.map((c) => `# ${c}`), ...stringify(table).trimEnd().split("\n"), CLOSE];
  return lines.join(eol) + eol;
}

const eolOf = (text: string) => (text.includes("\r\n") ? "\r\n" : "\n");

/** The text with our entry, in a marked block at the end (replacing the entry there was). */
export function putTomlEntry(path: string, doc: TomlDoc, key: string[], value: Tree, comment: string[]): string {
  const text = valueAt(doc.tree, key) === undefined ? doc.text : takeTomlEntry(path, doc, key, comment);
  const eol = eolOf(doc.text);
  const gap = text === "" ? "" : text.endsWith(eol + eol) || text === eol ? "" : text.endsWith("\n") ? eol : eol + eol;
  const out = text + gap + tomlBlock(key, value, comment, eol);
  let after: TomlDoc;
  try {
    after = readTomlDoc(path, out);
  } catch (error) {
    throw new EditRefused(
      `${path}: with our entry added it would not be valid TOML (${/\((.*)\)/.exec((error as Error).message)?.[1] ?? ""}); nothing was written. ` +
        `If it writes ${key[0]} as an inline table (${key[0]} = { … }), write it as [${key[0]}.NAME] tables instead, then run this again`,
    );
  }
  if (!sameValue(valueAt(after.tree, key), value) || !sameApartFrom(doc.tree, after.tree, key))
    throw new EditRefused(`${path}: the edit did not give the expected entry; nothing was written (please report this)`);
  return out;
}

/**
 * The text without our entry: the marked block when it holds only the entry, else the lines that
 * define it, and our marker and comment lines wherever they are (a closing marker deleted by hand
 * leaves nothing behind). `restore`: the user's own entry (lines from before a forced install) to
 * put back.
 */
export function takeTomlEntry(path: string, doc: TomlDoc, key: string[], comment: string[], restore?: string): string {
  const found = findEntry(doc, key);
  if (found.inline !== undefined)
    throw new EditRefused(`${path} defines [${key.join(".")}] inside an inline table (line ${found.inline}): edit that line by hand, then run this again`);
  const lines = doc.text.split(/(?<=\n)/);
  const bare = (l: string) => l.replace(/\r?\n$/, "");
  const ours = new Set([OPEN, CLOSE, ...comment.map((c) => `# ${c}`)]);
  const open = lines.findIndex((l) => bare(l) === OPEN);
  const close = lines.findIndex((l, i) => i > open && bare(l) === CLOSE);
  const attempts: Array<Set<number>> = [];
  // The whole block, if nothing of the user's was put inside it.
  if (open >= 0 && close > open && [...found.lines].every((l) => l > open && l < close))
    attempts.push(new Set(Array.from({ length: close - open + 1 }, (_, i) => open + i)));
  attempts.push(new Set([...found.lines, ...lines.flatMap((l, i) => (ours.has(bare(l)) ? [i] : []))]));
  for (const drop of attempts) {
    let out = removeLines(lines, drop);
    if (restore) out = putBack(out, restore, eolOf(doc.text));
    const after = readTomlOrUndefined(out);
    const expected = restore ? valueAt(readTomlDoc(path, restore).tree, key) : undefined;
    if (after && sameValue(valueAt(after.tree, key), expected) && sameApartFrom(doc.tree, after.tree, key)) return out;
  }
  throw new EditRefused(`${path}: taking [${key.join(".")}] out did not give the expected file; nothing was written (remove it by hand)`);
}

/** The entry's own lines in the file (to put back later), if it has one. */
export function tomlEntryText(doc: TomlDoc, key: string[]): string | undefined {
  const found = findEntry(doc, key);
  if (found.lines.size === 0 || found.inline !== undefined) return undefined;
  return doc.text
    .split(/(?<=\n)/)
    .filter((_, i) => found.lines.has(i))
    .join("");
}

/** The lines without those dropped, and without a blank line left doubled (or last) where they were. */
function removeLines(lines: string[], drop: Set<number>): string {
  const kept: string[] = [];
  const blank = (l: string | undefined) => l !== undefined && l.trim() === "";
  for (let i = 0; i < lines.length; i++) {
    if (drop.has(i)) {
      while (drop.has(i + 1)) i++;
      // A blank line before the removed lines and one after them (or the end): keep one of them only.
      if (blank(kept.at(-1)) && (i + 1 >= lines.length || blank(lines[i + 1]))) kept.pop();
      continue;
    }
    kept.push(lines[i]!);
  }
  return kept.join("");
}

function putBack(text: string, entry: string, eol: string): string {
  const gap = text === "" || text.endsWith(eol + eol) ? "" : text.endsWith("\n") ? eol : eol + eol;
  return text + gap + (entry.endsWith("\n") ? entry : entry + eol);
}

function readTomlOrUndefined(text: string): TomlDoc | undefined {
  try {
    return readTomlDoc("", text);
  } catch {
    return undefined;
  }
}
