// What --dry-run shows: each config file's change as the lines it removes (-) and adds (+), with
// two lines around them, computed from the very text the install would write.

const CONTEXT = 2;

export function changedLines(before: string | null, after: string): string {
  const a = before === null || before === "" ? [] : split(before);
  const b = split(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const from = Math.max(0, head - CONTEXT);
  const out: string[] = [];
  if (from > 0) out.push(`  … (${from} line${from === 1 ? "" : "s"})`);
  for (const line of a.slice(from, head)) out.push(`  ${line}`);
  for (const line of a.slice(head, a.length - tail)) out.push(`- ${line}`);
  for (const line of b.slice(head, b.length - tail)) out.push(`+ ${line}`);
  const rest = a.slice(a.length - tail);
  for (const line of rest.slice(0, CONTEXT)) out.push(`  ${line}`);
  if (rest.length > CONTEXT) out.push(`  … (${rest.length - CONTEXT} line${rest.length - CONTEXT === 1 ? "" : "s"})`);
  return out.join("\n");
}

/** Lines without their ends; a last line without one is marked, since the install may add it. */
function split(text: string): string[] {
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === "") lines.pop();
  else lines[lines.length - 1] += " (no newline at end)";
  return lines;
}
