// The environment a private instance starts with: credentials removed, the caller's inline config
// kept under ours, and the guard rails last so they win. Which variables carry them is the
// binary's (1.x: OPENCODE_CONFIG_CONTENT and OPENCODE_PERMISSION; 2.x: its inline config, loaded
// last): src/core/engine/binary.ts.
import { homedir } from "node:os";
import { join } from "node:path";
import { binaryOf } from "../engine/binary.js";
import { deepMerge, parseConfigJson } from "../engine/inline-config.js";
import { guardedEnv } from "../policy/guard-rails.js";
import type { PermissionRule } from "../policy/permissions.js";
import type { InstanceManagerOptions } from "./types.js";

type EnvOptions = Pick<InstanceManagerOptions, "env" | "guard" | "keepEnv" | "configFor">;

export function dataHome(options: EnvOptions): string {
  const env = options.env ?? process.env;
  return env.XDG_DATA_HOME || join(env.HOME || homedir(), ".local", "share");
}

/** `taskRules` (where the binary holds them, 2.x): the rules of the one task the server is for, in its config under the guard. */
export async function instanceEnvironment(options: EnvOptions, directory: string, major: 1 | 2, taskRules?: PermissionRule[]): Promise<NodeJS.ProcessEnv> {
  const base = options.env ?? process.env;
  const guard = options.guard !== false;
  const env = guard ? guardedEnv(base, { keep: options.keepEnv }) : { ...base };
  // The caller's own inline config stays, under ours; the guard comes last so it wins.
  let config = parseConfigJson(base.OPENCODE_CONFIG_CONTENT, "OPENCODE_CONFIG_CONTENT");
  config = deepMerge(config, (await options.configFor?.(directory)) ?? {});
  const opencodeDataDir = join(dataHome(options), "opencode");
  return { ...env, ...binaryOf(major).configEnv({ config, base, guard, opencodeDataDir, ...(taskRules ? { taskRules } : {}) }) };
}
