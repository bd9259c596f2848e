// What a session (or one of its turns) changed in the project's files.
import type { FileDiff } from "../model/file-change.js";
import type { CoreContext } from "../context.js";
import { type DirectoryOption } from "../context.js";
import { validId } from "../inputs/ids.js";
import { engineIn } from "./rows.js";
import { lastUserMessage } from "./messages.js";

export interface SessionDiff {
  sessionId: string;
  /** The user message whose turn this is; absent when the session has no user message. */
  messageId?: string;
  /** Line counts and the patch where opencode records them (1.x per turn; the 2.x pre-release lists files only). */
  files: Array<{ file: string; status?: "added" | "deleted" | "modified"; additions?: number; deletions?: number; patch?: string }>;
}

/**
 * Files one turn changed (git projects only). Without `messageId`, the last turn: the plain
 * session diff is always [] in 1.18.33, only `?messageID=` works (docs/opencode-behaviour.md §7).
 */
export async function sessionDiff(ctx: CoreContext, id: string, options: DirectoryOption & { messageId?: string } = {}): Promise<SessionDiff> {
  const sessionID = validId(id, "ses", "sessionId");
  const given = options.messageId !== undefined ? validId(options.messageId, "msg", "messageId") : undefined;
  // Listening first: the per-turn diff is written a moment after the turn goes idle (docs/opencode-behaviour.md §1, "after idle").
  const summarized = await summaryOf(ctx, sessionID);
  try {
    const messageID = given ?? (await lastUserMessage(ctx, sessionID, options.directory))?.info.id;
    if (!messageID) return { sessionId: sessionID, files: [] };
    const read = () => engineIn(ctx, options.directory).turnDiff(sessionID, messageID);
    let diff = await read();
    if (diff.length === 0 && (await summaryPending(ctx, sessionID, messageID, options.directory)) && (await summarized.until(messageID))) diff = await read();
    return diffOf(sessionID, messageID, diff);
  } finally {
    summarized.stop();
  }
}

/** How long a diff read waits for opencode to write the turn's summary after the turn ended. */
const SUMMARY_WAIT_MS = 5_000;

/** Resolves true when a user message of the session gets its `summary` (the per-turn diff), false after SUMMARY_WAIT_MS. */
async function summaryOf(ctx: CoreContext, sessionID: string): Promise<{ until(messageID: string): Promise<boolean>; stop(): void }> {
  const done = new Set<string>();
  const waiters = new Map<string, () => void>();
  const unsubscribe = await ctx.hub
    .subscribe(
      (event) => {
        if (event.type !== "message.updated" || event.properties.sessionID !== sessionID) return;
        const info = event.properties.info;
        if (info.role !== "user" || !info.summary) return;
        done.add(info.id);
        waiters.get(info.id)?.();
      },
      undefined,
      (id) => id === sessionID,
    )
    .catch(() => undefined); // no events: the diff is read once, as before
  return {
    async until(messageID) {
      if (done.has(messageID)) return true;
      return new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), SUMMARY_WAIT_MS);
        waiters.set(messageID, () => (clearTimeout(timer), resolve(true)));
      });
    },
    stop() {
      unsubscribe?.();
    },
  };
}

/** The turn of `messageID` edited files, and opencode has not yet written its summary. */
async function summaryPending(ctx: CoreContext, sessionID: string, messageID: string, directory: string | undefined): Promise<boolean> {
  const messages = await engineIn(ctx, directory).messages(sessionID);
  const user = messages.find((m) => m.info.id === messageID);
  if (!user || user.info.role !== "user" || user.info.summary) return false;
  const EDITS = new Set(["write", "edit", "patch", "apply_patch", "multiedit"]);
  return messages.some(
    (m) =>
      m.info.role === "assistant" &&
      m.info.parentID === messageID &&
      m.parts.some((p) => p.type === "tool" && EDITS.has(p.tool) && p.state.status === "completed"),
  );
}

function diffOf(sessionID: string, messageID: string, diff: FileDiff[]): SessionDiff {
  return {
    sessionId: sessionID,
    messageId: messageID,
    files: diff.flatMap((d) =>
      d.file
        ? [
            {
              file: d.file,
              ...(d.status ? { status: d.status } : {}),
              ...(d.additions !== undefined ? { additions: d.additions, deletions: d.deletions } : {}),
              ...(d.patch ? { patch: d.patch } : {}),
            },
          ]
        : [],
    ),
  };
}
