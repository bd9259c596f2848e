// Sessions as a caller sees them: the compact row, listings, and the id checks every session action
// shares (docs/opencode-behaviour.md §3).
import type { Session } from "../model/session.js";
import type { CoreContext } from "../context.js";
import type { Engine } from "../engine/engine.js";
import { type DirectoryOption } from "../context.js";
import { validId } from "../inputs/ids.js";
import { UsageError } from "../errors.js";

export interface SessionRow {
  id: string;
  title: string;
  directory: string;
  parentId?: string;
  /** ISO 8601 times. */
  created: string;
  updated: string;
  archived?: string;
}

export const iso = (ms: number) => new Date(ms).toISOString();

export function sessionRow(s: Session): SessionRow {
  return {
    id: s.id,
    title: s.title,
    directory: s.directory,
    ...(s.parentId ? { parentId: s.parentId } : {}),
    created: iso(s.time.created),
    updated: iso(s.time.updated),
    ...(s.time.archived ? { archived: iso(s.time.archived) } : {}),
  };
}

/** The engine bound to `directory` when one is given (the session's own, when it is not the context's). */
export const engineIn = (ctx: CoreContext, directory: string | undefined): Engine =>
  directory === undefined ? ctx.engine : ctx.engine.withDirectory(directory);

// ---------------------------------------------------------------------------------------------
// Listing

export interface ListSessionsOptions extends DirectoryOption {
  /** Case-insensitive text in the title. */
  search?: string;
  /** Only the child (sub-agent) sessions of this session. */
  parentId?: string;
  /** Default 50. */
  limit?: number;
}

/** Sessions, most recently updated first. */
export async function listSessions(ctx: CoreContext, options: ListSessionsOptions = {}): Promise<SessionRow[]> {
  const limit = options.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError(`limit must be a positive integer, got ${limit}.`);
  const search = options.search?.trim() || undefined;
  let sessions: Session[];
  const engine = engineIn(ctx, options.directory);
  if (options.parentId !== undefined) {
    const parentID = validId(options.parentId, "ses", "parentId");
    const needle = search?.toLowerCase();
    sessions = (await engine.childSessions(parentID)).filter((s) => !needle || s.title.toLowerCase().includes(needle));
  } else {
    sessions = await engine.listSessions({ limit, ...(search ? { search } : {}) });
  }
  return sessions
    .sort((a, b) => b.time.updated - a.time.updated)
    .slice(0, limit)
    .map(sessionRow);
}
