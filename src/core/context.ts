// What every core capability needs: the engine (opencode 1.x or 2.x, engine/engine.ts), the
// shared event stream, and settings. No client: the server's URL and directory are the engine's,
// and what only the typed 1.x client can do (oc_api, feature detection) takes it from the
// conductor or the v1 engine, outside the core's verbs.
import type { Engine } from "./engine/engine.js";
import type { EventHub } from "./event-hub.js";

export interface DirectoryOption {
  /** Project directory to ask about; default: the engine's. */
  directory?: string;
}

export interface CoreSettings {
  /** Default model for new work (`provider/model` or a name), e.g. from OPENCODE_CONDUCTOR_MODEL. */
  defaultModel?: string;
  /** Globs of `provider/model` ids that may be listed and used; empty = all. */
  modelAllow?: string[];
  /** Globs of `provider/model` ids that are hidden and refused. */
  modelBlock?: string[];
  /** Models a task switches to, in order, when its model keeps failing (OPENCODE_CONDUCTOR_FALLBACK). */
  fallbackModels?: string[];
  /** Seconds a session may stay in `retry` before the switch (OPENCODE_CONDUCTOR_RETRY_TIMEOUT_S; default 90). */
  retryTimeoutS?: number;
}

/** Model and agent chosen for a session's next turns (oc_session set_model / set_agent). */
export interface SessionDefaults {
  model?: string;
  agent?: string;
}

export interface CoreContext {
  /** Everything the core asks opencode goes through it. */
  engine: Engine;
  hub: EventHub;
  settings: CoreSettings;
  /** Remembered in this process only: opencode has no per-session setting for it. */
  sessionDefaults?: Map<string, SessionDefaults>;
}
