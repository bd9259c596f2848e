// opencode 2.x as a private instance's binary (see ../engine-binary.ts): there is no OPENCODE_PERMISSION,
// the inline config is loaded last, so the task's rules and the guard go there (v2-guard-rails.ts);
// the TUI has no `attach` but takes `--server` and the password from OPENCODE_PASSWORD.
import { connectV2 } from "../../../client/v2/index.js";
import type { EngineBinary } from "../engine-binary.js";
import { guardConfigV2, rulesConfigV2, withGuardV2 } from "./v2-guard-rails.js";

export const V2_BINARY: EngineBinary = {
  major: 2,
  configEnv({ config, guard, opencodeDataDir, taskRules }) {
    let content = config;
    if (taskRules) content = withGuardV2(content, rulesConfigV2(taskRules));
    if (guard) content = withGuardV2(content, guardConfigV2({ opencodeDataDir }));
    return { OPENCODE_CONFIG_CONTENT: JSON.stringify(content) };
  },
  taskRulesInConfig: true,
  guardInSessionRules: false,
  // `GET /api/session/active` lists the running sessions (`{data: {ses_…: {type: "running"}}}`).
  async activeSessions(target) {
    const pending = (target.v2 ??= connectV2({ url: target.url, password: target.password }));
    pending.catch(() => (target.v2 = undefined)); // a failed connect is retried at the next check
    const answer = (await (await pending).request("session.active", {}, { timeoutMs: 5_000 })) as { data?: Record<string, unknown> } | undefined;
    return answer?.data ?? {};
  },
  attach: (url, sessionId) => ({ command: `opencode --server ${url} --session ${sessionId}`, passwordVariable: "OPENCODE_PASSWORD" }),
};
