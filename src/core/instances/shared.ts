// The process-wide instance manager of the MCP server.
import type { Config } from "../../config.js";
import { InstanceManager } from "./manager.js";
import type { InstanceManagerOptions } from "./types.js";

let shared: { stateDir: string; manager: InstanceManager } | undefined;

/**
 * The process-wide manager for the MCP server (oc_delegate isolation "instance", oc_instances).
 * `options` count on the first call only (per state dir).
 */
export function sharedInstanceManager(
  config: Pick<Config, "stateDir" | "instanceTtlS" | "sandbox">,
  options: Partial<InstanceManagerOptions> = {},
): InstanceManager {
  if (!shared || shared.stateDir !== config.stateDir) {
    const sandbox = config.sandbox ? { sandbox: config.sandbox } : {};
    shared = { stateDir: config.stateDir, manager: new InstanceManager({ stateDir: config.stateDir, ttlS: config.instanceTtlS, ...sandbox, ...options }) };
  }
  return shared.manager;
}
