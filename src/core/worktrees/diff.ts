// What a worktree task changed, between two commits of the repository: the files with their line
// counts (the same FileChange shape a turn's summary uses) and the patch, cut at a bound.
import type { FileChange } from "../turns/summary.js";
import { git } from "./git.js";

/** A result carries at most this much of the patch; the rest is read on demand (patchOf with a larger cap). */
export const PATCH_PREVIEW_CHARS = 20_000;
/** The most a full read returns: past it, the branch itself holds the rest (`git diff base branch`). */
export const PATCH_MAX_CHARS = 8 * 1024 * 1024;

const STATUS: Record<string, FileChange["status"]> = { A: "added", D: "deleted", M: "modified", T: "modified" };

/** Files changed from `base` to `head`, sorted by path; binary files carry no line counts. */
export async function changedFiles(cwd: string, base: string, head: string): Promise<FileChange[]> {
  const [numstat, names] = await Promise.all([
    git(cwd, ["diff", "--numstat", "-z", "--no-renames", "--no-ext-diff", base, head]),
    git(cwd, ["diff", "--name-status", "-z", "--no-renames", "--no-ext-diff", base, head]),
  ]);
  const status = new Map<string, FileChange["status"]>();
  const fields = names.stdout.split("\0");
  for (let i = 0; i + 1 < fields.length; i += 2) status.set(fields[i + 1]!, STATUS[fields[i]!.charAt(0)] ?? "modified");
  const files: FileChange[] = [];
  for (const record of numstat.stdout.split("\0")) {
    const match = /^(-|\d+)\t(-|\d+)\t(.*)$/s.exec(record);
    if (!match) continue;
    const [, added, removed, path] = match as unknown as [string, string, string, string];
    const s = status.get(path);
    files.push({
      path,
      ...(s ? { status: s } : {}),
      ...(added === "-" ? {} : { additions: Number(added), deletions: Number(removed) }),
    });
  }
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

export interface Patch {
  patch: string;
  /** The patch was longer than the cap and is cut there. */
  truncated: boolean;
}

/** `git diff --binary base head`, at most `maxChars` of it. */
export async function patchOf(cwd: string, base: string, head: string, maxChars = PATCH_PREVIEW_CHARS): Promise<Patch> {
  const r = await git(cwd, ["diff", "--binary", "--no-renames", "--no-ext-diff", "--no-color", base, head], { maxBytes: maxChars + 1 });
  const truncated = r.truncated || r.stdout.length > maxChars;
  return { patch: truncated ? r.stdout.slice(0, maxChars) : r.stdout, truncated };
}

/** Files whose patch a file-by-file view shows; the rest are listed with their counts only. */
const VIEW_FILES = 50;

/** Each changed file with its own patch (the first VIEW_FILES files), as a page of diffs shows them. */
export async function fileDiffs(cwd: string, base: string, head: string, maxChars = PATCH_PREVIEW_CHARS): Promise<Array<FileChange & { patch?: string }>> {
  const files = await changedFiles(cwd, base, head);
  return Promise.all(
    files.map(async (f, i) => {
      if (i >= VIEW_FILES) return f;
      const r = await git(cwd, ["diff", "--no-renames", "--no-ext-diff", "--no-color", base, head, "--", `:(literal)${f.path}`], { maxBytes: maxChars });
      return { ...f, patch: r.truncated ? `${r.stdout}\n… (cut at ${maxChars} characters)` : r.stdout };
    }),
  );
}
