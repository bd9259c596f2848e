// The session actions as a library caller reaches them: `conductor.sessions.info(id)` and so on,
// each bound to the conductor (the free functions in this folder are the internals).
import type { CoreContext, DirectoryOption } from "../context.js";
import {
  archiveSession,
  abortSession,
  compactSession,
  deleteSession,
  exportSession,
  forkSession,
  renameSession,
  revertSession,
  sessionTodo,
  shellInSession,
  unrevertSession,
  type CompactOptions,
  type ShellOptions,
} from "./actions.js";
import { setSessionAgent, setSessionModel } from "./defaults.js";
import { sessionDiff } from "./diff.js";
import { sessionInfo } from "./info.js";
import { sessionMessages } from "./messages.js";
import { listSessions, type ListSessionsOptions } from "./rows.js";

export function sessionsApi(ctx: CoreContext) {
  return {
    list: (options?: ListSessionsOptions) => listSessions(ctx, options),
    info: (id: string, options?: DirectoryOption) => sessionInfo(ctx, id, options),
    messages: (id: string, options?: DirectoryOption & { limit?: number; before?: string }) => sessionMessages(ctx, id, options),
    diff: (id: string, options?: DirectoryOption & { messageId?: string }) => sessionDiff(ctx, id, options),
    fork: (id: string, options?: DirectoryOption & { messageId?: string }) => forkSession(ctx, id, options),
    rename: (id: string, title: string, options?: DirectoryOption) => renameSession(ctx, id, title, options),
    archive: (id: string) => archiveSession(ctx, id),
    abort: (id: string, options?: DirectoryOption) => abortSession(ctx, id, options),
    delete: (id: string, options?: DirectoryOption) => deleteSession(ctx, id, options),
    revert: (id: string, options: DirectoryOption & { messageId: string; partId?: string }) => revertSession(ctx, id, options),
    unrevert: (id: string, options?: DirectoryOption) => unrevertSession(ctx, id, options),
    compact: (id: string, options?: CompactOptions) => compactSession(ctx, id, options),
    shell: (id: string, options: ShellOptions) => shellInSession(ctx, id, options),
    export: (id: string, options?: DirectoryOption) => exportSession(ctx, id, options),
    todo: (id: string, options?: DirectoryOption) => sessionTodo(ctx, id, options),
    /** The model the session's next turns use when a call names none (kept by this conductor). */
    setModel: (id: string, model: string) => setSessionModel(ctx, id, model),
    setAgent: (id: string, agent: string) => setSessionAgent(ctx, id, agent),
  };
}

export type SessionsApi = ReturnType<typeof sessionsApi>;
