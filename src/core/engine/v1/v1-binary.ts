// opencode 1.x as a private instance's binary (see ../engine-binary.ts): the guard goes into the inline
// config and into OPENCODE_PERMISSION (merged after every config file, the repository's included),
// and again into each session's rules; `opencode attach` watches a session.
import type { EngineBinary } from "../engine-binary.js";
import { guardConfig, guardPermissionConfig } from "../../policy/guard-rails.js";
import { deepMerge, parseConfigJson } from "../inline-config.js";

export const V1_BINARY: EngineBinary = {
  major: 1,
  configEnv({ config, base, guard }) {
    const content = guard ? deepMerge(config, guardConfig()) : config;
    const env: Record<string, string> = { OPENCODE_CONFIG_CONTENT: JSON.stringify(content) };
    if (guard) env.OPENCODE_PERMISSION = JSON.stringify(deepMerge(parseConfigJson(base.OPENCODE_PERMISSION, "OPENCODE_PERMISSION"), guardPermissionConfig()));
    return env;
  },
  taskRulesInConfig: false,
  guardInSessionRules: true,
  // `session.status` lists only the sessions that are busy or retrying.
  activeSessions: (target) => target.client.call("session.status", {}, { timeoutMs: 5_000 }),
  attach: (url, sessionId) => ({ command: `opencode attach ${url} --session ${sessionId}`, passwordVariable: "OPENCODE_SERVER_PASSWORD" }),
};
