// The delegation skill in a Markdown context file (AGENTS.md, GEMINI.md) the user also writes in:
// a block between two marker comments, so it can be found, replaced by a newer skill, and taken
// out again without touching a line of theirs.
import { EditRefused } from "./refused.js";

const OPEN = "<!-- >>> opencode-conductor (remove with: opencode-conductor uninstall) -->";
const CLOSE = "<!-- <<< opencode-conductor -->";

const eolOf = (text: string) => (text.includes("\r\n") ? "\r\n" : "\n");
const bare = (line: string) => line.replace(/\r?\n$/, "");
const bodyLines = (body: string) => body.trimEnd().split(/\r?\n/);

/** Lines [from, to] of our block (markers included); `to` undefined: the end marker is gone and what follows is not our text. */
function findBlock(lines: string[], body: string): { from: number; to?: number } | undefined {
  const from = lines.findIndex((l) => bare(l) === OPEN);
  if (from < 0) return undefined;
  const close = lines.findIndex((l, i) => i > from && bare(l) === CLOSE);
  if (close > from) return { from, to: close };
  // The end marker deleted by hand: the block ends where our text does, if it is all there.
  const ours = bodyLines(body);
  const matches = ours.every((line, i) => bare(lines[from + 1 + i] ?? "\u0000") === line);
  return { from, to: matches ? from + ours.length : undefined };
}

function blockText(body: string, eol: string): string {
  return [OPEN, ...bodyLines(body), CLOSE].join(eol) + eol;
}

/** Whether the file holds our block with exactly this body. */
export function holdsBlock(text: string | undefined, body: string): boolean {
  if (text === undefined) return false;
  const lines = text.split(/(?<=\n)/);
  const found = findBlock(lines, body);
  return found?.to !== undefined && bare(lines[found.to]!) === CLOSE && sameLines(lines.slice(found.from + 1, found.to), bodyLines(body));
}

const sameLines = (a: string[], b: string[]) => a.length === b.length && a.every((l, i) => bare(l) === b[i]);

/** The text with our block: appended, or in place of the one there (a newer skill replaces an older one). */
export function putBlock(path: string, text: string | undefined, body: string): string {
  const before = text ?? "";
  const eol = eolOf(before);
  const lines = before.split(/(?<=\n)/);
  const found = findBlock(lines, body);
  if (!found) {
    const gap = before === "" || before.endsWith(eol + eol) ? "" : before.endsWith("\n") ? eol : eol + eol;
    return before + gap + blockText(body, eol);
  }
  if (found.to === undefined) throw endMarkerGone(path, found.from);
  return [...lines.slice(0, found.from), blockText(body, eol), ...lines.slice(found.to + 1)].join("");
}

/** The text without our block (and the blank line the install put before it). */
export function takeBlock(path: string, text: string, body: string): string {
  const lines = text.split(/(?<=\n)/);
  const found = findBlock(lines, body);
  if (!found) return text;
  if (found.to === undefined) throw endMarkerGone(path, found.from);
  let from = found.from;
  const atEnd = found.to + 1 >= lines.length || bare(lines[found.to + 1]!) === "";
  if (from > 0 && bare(lines[from - 1]!) === "" && atEnd) from--;
  return [...lines.slice(0, from), ...lines.slice(found.to + 1)].join("");
}

const endMarkerGone = (path: string, from: number) =>
  new EditRefused(
    `${path}: our block starts at line ${from + 1} but its end marker (${CLOSE}) is gone and the text after it changed: put the marker back after our text, or delete the block by hand`,
  );
