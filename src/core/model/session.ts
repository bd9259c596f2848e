// A session as the core reads it, whichever opencode holds it (each engine maps its own into this),
// what it is doing right now, and its to-do list.
export interface Session {
  id: string;
  title: string;
  directory: string;
  parentId?: string;
  time: { created: number; updated: number; archived?: number };
  model?: { providerID: string; modelID: string; variant?: string };
  agent?: string;
  cost?: number;
  tokens?: { input: number; output: number; reasoning: number; cacheRead: number; cacheWrite: number };
  revert?: { messageId: string; partId?: string; diff?: string };
  shareUrl?: string;
}

/** What a session is doing (the engine's read of it). */
export type SessionRunState =
  | { type: "idle" }
  | { type: "busy" }
  /** opencode waits to retry a failed model call (`next`: epoch ms). */
  | { type: "retry"; attempt: number; message: string; next: number };

/** One entry of a session's to-do list as the agent keeps it. */
export interface Todo {
  /** Brief description of the task. */
  content: string;
  /** pending, in_progress, completed, cancelled. */
  status: string;
  /** high, medium, low. */
  priority: string;
}
