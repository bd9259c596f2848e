// What every core capability needs: the typed client, the shared event stream, and settings.
import type { OpencodeClient } from "../client/connect.js";
import type { EventHub } from "./event-hub.js";

export interface CoreSettings {
  /** Default model for new work (`provider/model` or a name), e.g. from OPENCODE_CONDUCTOR_MODEL. */
  defaultModel?: string;
  /** Globs of `provider/model` ids that may be listed and used; empty = all. */
  modelAllow?: string[];
  /** Globs of `provider/model` ids that are hidden and refused. */
  modelBlock?: string[];
}

export interface CoreContext {
  client: OpencodeClient;
  hub: EventHub;
  settings: CoreSettings;
}
