// Bringing tasks' branches back into a target branch, in the order given, without ever making a
// half-merged tree: each merge is computed with `git merge-tree --write-tree` (no work tree, no
// index), a clean one becomes a fast-forward or a merge commit made with commit-tree, and a
// conflicting one is skipped and reported with its files and the tasks already in the target that
// touched them. Only the final commit lands, once: by a compare-and-swap of the branch ref, or, when
// the branch is checked out somewhere (the user's current branch), by a fast-forward of that
// checkout, which git refuses, changing nothing, when it would overwrite uncommitted changes there.
import { quoted, UsageError } from "../errors.js";
import { branchCommit, CONDUCTOR_IDENTITY, git, gitLine, isAncestor, isValidBranchName } from "./git.js";
import { checkoutOf } from "./repo.js";

export interface MergeItem {
  /** The task's id (its session id), used in reports. */
  id: string;
  branch: string;
  /** The commit the task started from. */
  base: string;
  /** Said in the merge commit's message (e.g. the task's title). */
  title?: string;
}

export type MergeResult = "fast-forward" | "merged" | "already" | "conflict" | "missing";

export interface MergeOutcome {
  id: string;
  branch: string;
  result: MergeResult;
  /** The target's commit after this item (fast-forward, merged, already). */
  commit?: string;
  /** With `conflict`: the files both sides changed. */
  files?: string[];
  /** With `conflict`: tasks already in the target (merged before, here or earlier) that changed those files. */
  with?: string[];
}

export interface MergeReport {
  into: string;
  /** The target's commit before; undefined when the branch was created here. */
  before?: string;
  after: string;
  created: boolean;
  /** How the result landed: the ref moved, a checkout fast-forwarded, or nothing to do. */
  landed: "ref" | "checkout" | "unchanged";
  /** The work tree that was fast-forwarded (landed `checkout`). */
  checkout?: string;
  outcomes: MergeOutcome[];
}

export interface MergeOptions {
  /** When the target branch does not exist: create it at this commit (e.g. the first task's base). */
  createAt?: string;
  /** Tasks merged into the target earlier, to name in a conflict besides those merged in this call. */
  earlier?: MergeItem[];
}

/** Thrown when the merged result could not land; the target is as it was. */
export class MergeLandingError extends Error {
  override name = "MergeLandingError";
}

export async function mergeInto(commonDir: string, into: string, items: MergeItem[], o: MergeOptions = {}): Promise<MergeReport> {
  if (!(await isValidBranchName(commonDir, into))) throw new UsageError(`${quoted(into)} is not a valid branch name.`);
  const before = await branchCommit(commonDir, into);
  if (before === undefined && o.createAt === undefined) throw new UsageError(`There is no branch ${quoted(into)} in this repository.`);
  let current = before ?? o.createAt!;
  const touched = new Map<string, Promise<Set<string>>>();
  const filesOf = (item: MergeItem, head: string) => {
    const key = `${item.base}..${head}`;
    let files = touched.get(key);
    if (!files) touched.set(key, (files = changedNames(commonDir, item.base, head)));
    return files;
  };
  const inTarget: Array<{ item: MergeItem; head: string }> = [];
  for (const item of o.earlier ?? []) {
    const head = await branchCommit(commonDir, item.branch);
    if (head) inTarget.push({ item, head });
  }

  const outcomes: MergeOutcome[] = [];
  for (const item of items) {
    const head = await branchCommit(commonDir, item.branch);
    const row = { id: item.id, branch: item.branch };
    if (head === undefined) {
      outcomes.push({ ...row, result: "missing" });
      continue;
    }
    if (await isAncestor(commonDir, head, current)) {
      outcomes.push({ ...row, result: "already", commit: current });
      continue;
    }
    if (await isAncestor(commonDir, current, head)) {
      current = head;
      inTarget.push({ item, head });
      outcomes.push({ ...row, result: "fast-forward", commit: current });
      continue;
    }
    const merged = await mergeTree(commonDir, current, head);
    if ("conflicts" in merged) {
      const files = merged.conflicts;
      const others: string[] = [];
      for (const t of inTarget) {
        const changed = await filesOf(t.item, t.head);
        if (files.some((f) => changed.has(f)) && !others.includes(t.item.id)) others.push(t.item.id);
      }
      outcomes.push({ ...row, result: "conflict", files, with: others });
      continue;
    }
    const message = `Merge ${item.branch} into ${into}${item.title ? `\n\n${item.title}` : ""}`;
    current = await gitLine(commonDir, ["commit-tree", "--no-gpg-sign", merged.tree, "-p", current, "-p", head, "-m", message], { env: CONDUCTOR_IDENTITY });
    inTarget.push({ item, head });
    outcomes.push({ ...row, result: "merged", commit: current });
  }

  const report = { into, ...(before ? { before } : {}), after: current, created: before === undefined, outcomes };
  if (current === before) return { ...report, landed: "unchanged" };
  return { ...report, ...(await land(commonDir, into, before, current)) };
}

type Merged = { tree: string } | { conflicts: string[] };

/** The merged tree of two commits, or the files that conflict; nothing but objects is written. */
async function mergeTree(commonDir: string, ours: string, theirs: string): Promise<Merged> {
  const r = await git(commonDir, ["merge-tree", "--write-tree", "--name-only", "-z", "--no-messages", ours, theirs], { okCodes: [0, 1] });
  const [tree, ...names] = r.stdout.split("\0");
  // Exit 1 without a tree is an error (git answers "not something we can merge" that way).
  if (!tree || !/^[0-9a-f]{40,64}$/.test(tree)) throw new Error(`git merge-tree gave no tree for ${ours.slice(0, 12)} and ${theirs.slice(0, 12)}.`);
  if (r.code === 0) return { tree };
  return { conflicts: [...new Set(names.filter(Boolean))] };
}

async function changedNames(commonDir: string, base: string, head: string): Promise<Set<string>> {
  const { stdout } = await git(commonDir, ["diff", "--name-only", "-z", "--no-renames", base, head]);
  return new Set(stdout.split("\0").filter(Boolean));
}

async function land(commonDir: string, into: string, before: string | undefined, after: string): Promise<Pick<MergeReport, "landed" | "checkout">> {
  const checkout = before === undefined ? undefined : await checkoutOf(commonDir, into);
  if (!checkout) {
    // Compare-and-swap: fails, changing nothing, when the branch moved (or appeared) meanwhile.
    const r = await git(commonDir, ["update-ref", "-m", "opencode-conductor: merge", `refs/heads/${into}`, after, before ?? ""], { okCodes: [0, 1, 128] });
    if (r.code !== 0) throw new MergeLandingError(`The branch ${quoted(into)} changed while the merge was computed; nothing was changed. Merge again.`);
    return { landed: "ref" };
  }
  if (checkout.head !== before)
    throw new MergeLandingError(`The branch ${quoted(into)} changed while the merge was computed; nothing was changed. Merge again.`);
  // The checkout moves with its branch, or its files would show the merge undone: a fast-forward to
  // the commit made above, which cannot conflict and which git refuses whole over local changes.
  const r = await git(checkout.path, ["merge", "--ff-only", "--quiet", "--no-stat", "--no-edit", after], {
    okCodes: [0, 1, 128],
    timeoutMs: 10 * 60_000,
  }).catch((error: Error) => ({ code: -1, stdout: "", error }));
  if (r.code !== 0) {
    const why = "error" in r ? r.error.message : "";
    const reason = (await localChanges(checkout.path, before!, after)) ?? why;
    throw new MergeLandingError(
      `${quoted(into)} is checked out at ${quoted(checkout.path)} and could not be fast-forwarded there${reason ? `: ${reason}` : ""}. Nothing was changed: commit or stash those changes, or merge into another branch.`,
    );
  }
  return { landed: "checkout", checkout: checkout.path };
}

/** Which uncommitted files of the checkout the merge would overwrite, said in words, if any. */
async function localChanges(path: string, before: string, after: string): Promise<string | undefined> {
  const [status, incoming] = await Promise.all([
    git(path, ["status", "--porcelain=v1", "-z", "--untracked-files=normal"]).catch(() => undefined),
    changedNames(path, before, after).catch(() => new Set<string>()),
  ]);
  if (!status) return undefined;
  const local = status.stdout.split("\0").flatMap((e) => (e.length > 3 && /^[ MADRCU?!]{2} /.test(e) ? [e.slice(3)] : []));
  const hit = local.filter((f) => incoming.has(f) || [...incoming].some((i) => f.endsWith("/") && i.startsWith(f)));
  if (hit.length === 0) return undefined;
  const shown = hit.slice(0, 10).map((f) => quoted(f, 120));
  return `uncommitted changes to ${shown.join(", ")}${hit.length > 10 ? ` and ${hit.length - 10} more` : ""} would be overwritten`;
}
