// Our server entry in a JSON or JSONC config (Claude Code, Gemini CLI, Cursor, opencode). The file
// is read with jsonc-parser (comments and trailing commas allowed), and an edit changes only the
// entry's own lines, placed from jsonc-parser's syntax tree and scanner: the user's lines, comments,
// indentation, line ends and numbers beyond JavaScript's precision stay byte for byte.
// (jsonc-parser's own `modify` re-formats the lines around an edit and, taking out a first
// property, the comments after it.) Each result is parsed again and compared before it is used.
import { createScanner, findNodeAtLocation, getNodeValue, parseTree, printParseErrorCode, type Node, type ParseError } from "jsonc-parser";
import { plain, sameApartFrom, sameValue, valueAt, type Tree } from "./entry-tree.js";
import { EditRefused } from "./refused.js";

const PARSE = { allowTrailingComma: true, disallowComments: false, allowEmptyContent: true };
// jsonc-parser's SyntaxKind is a const enum, which isolated modules cannot read.
const COMMA = 5;
const LINE_COMMENT = 12;
const BLOCK_COMMENT = 13;
const SPACE = 15;

export interface JsonDoc {
  /** The parsed content ({} for an empty file). Numbers are JavaScript's: compare, never write them. */
  tree: Tree;
  text: string;
  root?: Node;
}

/** Parses a JSON(C) config, or says what is wrong and where. */
export function readJsonDoc(path: string, text: string | undefined): JsonDoc {
  if (text === undefined || text.trim() === "") return { tree: {}, text: text ?? "" };
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, PARSE);
  if (errors.length > 0) {
    const e = errors[0]!;
    const line = text.slice(0, e.offset).split("\n").length;
    throw new EditRefused(`${path} is not valid JSON (line ${line}: ${printParseErrorCode(e.error)}): fix it, then run this again`);
  }
  if (root === undefined) return { tree: {}, text }; // comments only
  if (root.type !== "object") throw new EditRefused(`${path} holds a JSON ${root.type}, not an object: fix or move it, then run this again`);
  return { tree: plain(getNodeValue(root)) as Tree, text, root };
}

interface Style {
  eol: string;
  /** One level of indentation. */
  unit: string;
}

function styleOf(text: string): Style {
  const indent = /^([ \t]+)["}\]/]/m.exec(text)?.[1];
  return { eol: text.includes("\r\n") ? "\r\n" : "\n", unit: indent?.startsWith("\t") ? "\t" : " ".repeat(indent?.length ?? 2) };
}

const lineStart = (text: string, offset: number) => text.lastIndexOf("\n", offset - 1) + 1;
/** The whitespace before `offset` when nothing else is on its line; undefined when something is. */
function ownLineIndent(text: string, offset: number): string | undefined {
  const before = text.slice(lineStart(text, offset), offset);
  return /^[ \t]*$/.test(before) ? before : undefined;
}

/** `value` as JSON with the file's indentation and line ends, its first line at `indent`. */
function pretty(value: unknown, indent: string, style: Style): string {
  return JSON.stringify(value, null, style.unit || "  ")
    .split("\n")
    .join(style.eol + indent);
}

/** What follows a value on its line: its comma (if any), and where the line's own content ends. */
function after(text: string, offset: number): { comma?: number; end: number } {
  const scanner = createScanner(text, false);
  scanner.setPosition(offset);
  let comma: number | undefined;
  let end = offset;
  for (;;) {
    const kind: number = scanner.scan();
    if (kind === SPACE) continue;
    if (kind === COMMA && comma === undefined) comma = scanner.getTokenOffset();
    else if (kind === BLOCK_COMMENT && !scanner.getTokenValue().includes("\n")) {
      // a comment on the same line stays with it
    } else if (kind === LINE_COMMENT) {
      end = scanner.getTokenOffset() + scanner.getTokenLength();
      break;
    } else break;
    end = scanner.getTokenOffset() + scanner.getTokenLength();
  }
  return { comma, end };
}

interface TextEdit {
  offset: number;
  length: number;
  content: string;
}

function applyEdits(text: string, edits: TextEdit[]): string {
  return [...edits].sort((a, b) => b.offset - a.offset).reduce((out, e) => out.slice(0, e.offset) + e.content + out.slice(e.offset + e.length), text);
}

/** The edits that add `"name": value` as the last property of `object`. */
function insertInto(text: string, object: Node, name: string, value: unknown, style: Style): TextEdit[] {
  const property = (indent: string) => `${JSON.stringify(name)}: ${pretty(value, indent, style)}`;
  const props = object.children ?? [];
  const last = props.at(-1);
  const baseIndent = /^[ \t]*/.exec(text.slice(lineStart(text, object.offset)))![0];
  if (!last) {
    const inside = text.slice(object.offset + 1, object.offset + object.length - 1);
    const indent = baseIndent + style.unit;
    // `{}` becomes the entry on its own lines; comments inside stay after it.
    if (inside.trim() === "")
      return [{ offset: object.offset + 1, length: inside.length, content: style.eol + indent + property(indent) + style.eol + baseIndent }];
    return [{ offset: object.offset + 1, length: 0, content: style.eol + indent + property(indent) }];
  }
  const lastEnd = last.offset + last.length;
  const indent = ownLineIndent(text, last.offset);
  const next = after(text, lastEnd);
  if (indent === undefined) {
    // Written on one line (minified): the entry goes there too, as compact as the rest.
    return [{ offset: lastEnd, length: 0, content: `,${JSON.stringify(name)}:${JSON.stringify(value)}` }];
  }
  // On a line of its own after the last property and whatever follows it on that line; a trailing comma stays the file's style.
  const line = style.eol + indent + property(indent);
  if (next.comma !== undefined) return [{ offset: next.end, length: 0, content: `${line},` }];
  if (next.end === lastEnd) return [{ offset: lastEnd, length: 0, content: `,${line}` }];
  return [
    { offset: lastEnd, length: 0, content: "," },
    { offset: next.end, length: 0, content: line },
  ];
}

/** The edits that take out the property whose value is `valueNode`, and its line when it has one. */
function removeFrom(text: string, valueNode: Node): TextEdit[] {
  const prop = valueNode.parent!;
  const object = prop.parent!;
  const props = object.children!;
  const index = props.indexOf(prop);
  const end = prop.offset + prop.length;
  const next = after(text, end);
  const previous = props[index - 1];
  const edits: TextEdit[] = [];
  if (ownLineIndent(text, prop.offset) !== undefined && /^[ \t]*(\r?\n|$)/.test(text.slice(next.end))) {
    // Its own lines: from the start of its line to the end of its last one (comment included).
    const from = lineStart(text, prop.offset);
    const lineEnd = text.indexOf("\n", next.end);
    edits.push({ offset: from, length: (lineEnd < 0 ? text.length : lineEnd + 1) - from, content: "" });
    // The last property: the comma before it would now trail (unless the file writes trailing commas).
    if (next.comma === undefined && previous) {
      const comma = after(text, previous.offset + previous.length).comma;
      if (comma !== undefined) edits.push({ offset: comma, length: 1, content: "" });
    }
  } else if (next.comma !== undefined) edits.push({ offset: prop.offset, length: next.comma + 1 - prop.offset, content: "" });
  else if (previous) {
    const comma = after(text, previous.offset + previous.length).comma ?? previous.offset + previous.length;
    edits.push({ offset: comma, length: end - comma, content: "" });
  } else edits.push({ offset: prop.offset, length: end - prop.offset, content: "" });
  return edits;
}

/** The text with `value` at `key` (replacing what was there), checked by parsing it again. */
export function putEntry(path: string, doc: JsonDoc, key: string[], value: unknown): string {
  const style = styleOf(doc.text);
  let text: string;
  const existing = doc.root && findNodeAtLocation(doc.root, key);
  if (existing) {
    const indent = /^[ \t]*/.exec(doc.text.slice(lineStart(doc.text, existing.parent!.offset)))![0];
    text = applyEdits(doc.text, [{ offset: existing.offset, length: existing.length, content: pretty(value, indent, style) }]);
  } else {
    // The deepest object on the key's path that exists; what is missing below it is added with the entry.
    let depth = key.length - 1;
    while (depth > 0 && !(doc.root && findNodeAtLocation(doc.root, key.slice(0, depth)))) depth--;
    const parent = depth === 0 ? doc.root : findNodeAtLocation(doc.root!, key.slice(0, depth));
    if (parent && parent.type !== "object") throw new EditRefused(`${path}: "${key.slice(0, depth).join(".")}" is not an object: fix it, then run this again`);
    const nested = key.slice(depth + 1).reduceRight<unknown>((inner, k) => ({ [k]: inner }), value);
    if (parent) text = applyEdits(doc.text, insertInto(doc.text, parent, key[depth]!, nested, style));
    else {
      // No object yet (an empty file, or comments only).
      const prefix = doc.text.trim() === "" ? "" : doc.text.endsWith("\n") ? doc.text : doc.text + style.eol;
      text = prefix + pretty({ [key[0]!]: nested }, "", style) + style.eol;
    }
  }
  const result = reread(path, text);
  if (!sameValue(valueAt(result.tree, key), value) || !sameApartFrom(doc.tree, result.tree, key))
    throw new EditRefused(`${path}: the edit did not give the expected entry; nothing was written (please report this)`);
  return text;
}

/**
 * The text without `key`; `restore`: the entry's text to put back instead (the user's, from before
 * a forced install), and `dropEmptyParent`: the parent object the install created, once empty.
 */
export function takeEntry(path: string, doc: JsonDoc, key: string[], restore?: { text: string; tree: Tree }, dropEmptyParent = false): string {
  const node = doc.root && findNodeAtLocation(doc.root, key);
  if (!node) return doc.text;
  let text: string;
  if (restore) text = applyEdits(doc.text, [{ offset: node.offset, length: node.length, content: restore.text }]);
  else {
    text = applyEdits(doc.text, removeFrom(doc.text, node));
    const parentKey = key.slice(0, -1);
    const root = readJsonDoc(path, text).root;
    const parent = root && parentKey.length > 0 ? findNodeAtLocation(root, parentKey) : undefined;
    if (parent && parent.type === "object" && (parent.children ?? []).length === 0) {
      const inside = text.slice(parent.offset + 1, parent.offset + parent.length - 1);
      if (dropEmptyParent && inside.trim() === "") text = applyEdits(text, removeFrom(text, parent));
      // `{` and `}` that the entry had been put between go back to `{}`.
      else if (inside.trim() === "" && inside.length > 0) text = applyEdits(text, [{ offset: parent.offset + 1, length: inside.length, content: "" }]);
    }
  }
  const result = reread(path, text);
  const expected = restore ? valueAt(restore.tree, key) : undefined;
  if (!sameValue(valueAt(result.tree, key), expected) || !sameApartFrom(doc.tree, result.tree, key))
    throw new EditRefused(`${path}: taking our entry out did not give the expected file; nothing was written (remove it by hand)`);
  return text;
}

/** An edit's result parsed again: an error here is ours, never the user's file. */
function reread(path: string, text: string): JsonDoc {
  try {
    return readJsonDoc(path, text);
  } catch (error) {
    throw new EditRefused(
      `${path}: the edit would not leave valid JSON (${(error as Error).message.slice(path.length + 1)}); nothing was written (please report this)`,
    );
  }
}

/** The entry's own text in the file (to put it back byte for byte later), if there is one. */
export function entryText(doc: JsonDoc, key: string[]): string | undefined {
  const node = doc.root && findNodeAtLocation(doc.root, key);
  return node ? doc.text.slice(node.offset, node.offset + node.length) : undefined;
}
