// The CLI's connection, loaded when it is first needed: opencode-connection.ts brings the whole core (the
// conductor, both engines, the operation table, private instances, worktrees), which neither
// `initialize` nor any list call uses, and which would otherwise make every start as slow as a
// first tool call (docs/performance.md, "Start-up"). `warm()` loads it once the server is up, so
// that what a start does (stopping the private instances and worktrees of a conductor that was
// killed) still happens without waiting for a call.
import type { Config } from "../config.js";
import type { Connection } from "./opencode-connection.js";
import type * as ConnectionModule from "./opencode-connection.js";

export interface LazyConnection extends Connection {
  /** Loads the connection now, in the background (idempotent). */
  warm(): void;
}

export function lazyConnection(config: Config, load: () => Promise<typeof ConnectionModule> = () => import("./opencode-connection.js")): LazyConnection {
  let loading: Promise<Connection> | undefined;
  let loaded: Connection | undefined;
  const real = () => (loading ??= load().then(({ createConnection }) => (loaded = createConnection(config))));
  return {
    warm: () => void real().catch(() => undefined),
    conductor: async (sessionId) => (await real()).conductor(sessionId),
    otherServers: async () => (await real()).otherServers(),
    // Secrets are learned at run time (a server started here): none before the connection exists.
    secrets: () => loaded?.secrets() ?? [],
    describe: () => loaded?.describe() ?? { mode: "not connected", steps: [] },
    async close() {
      await (loading ? (await loading).close() : undefined);
    },
  };
}
