// The environment a private instance starts with: credentials removed, the caller's inline config
// kept under ours, and the guard rails last so they win (1.x: OPENCODE_CONFIG_CONTENT and
// OPENCODE_PERMISSION; 2.x reads no OPENCODE_PERMISSION, its inline config is loaded last).
import { homedir } from "node:os";
import { join } from "node:path";
import { UsageError } from "../errors.js";
import { guardConfig, guardedEnv, guardPermissionConfig } from "../policy/guard-rails.js";
import { guardConfigV2, rulesConfigV2, withGuardV2 } from "../engine/v2/v2-guard-rails.js";
import type { PermissionRule } from "../policy/permissions.js";
import type { InstanceManagerOptions, Json } from "./types.js";

type EnvOptions = Pick<InstanceManagerOptions, "env" | "guard" | "keepEnv" | "configFor">;

export function dataHome(options: EnvOptions): string {
  const env = options.env ?? process.env;
  return env.XDG_DATA_HOME || join(env.HOME || homedir(), ".local", "share");
}

/** `taskRules` (2.x only): the rules of the one task the server is for, in its config under the guard. */
export async function instanceEnvironment(options: EnvOptions, directory: string, major: 1 | 2, taskRules?: PermissionRule[]): Promise<NodeJS.ProcessEnv> {
  const base = options.env ?? process.env;
  const guard = options.guard !== false;
  const env = guard ? guardedEnv(base, { keep: options.keepEnv }) : { ...base };
  // The caller's own inline config stays, under ours; the guard comes last so it wins.
  let config = parseJson(base.OPENCODE_CONFIG_CONTENT, "OPENCODE_CONFIG_CONTENT");
  config = deepMerge(config, (await options.configFor?.(directory)) ?? {});
  if (major === 2) {
    if (taskRules) config = withGuardV2(config, rulesConfigV2(taskRules));
    // 2.x reads no OPENCODE_PERMISSION; its inline config is loaded last (engine/v2/v2-guard-rails.ts).
    if (guard) config = withGuardV2(config, guardConfigV2({ opencodeDataDir: join(dataHome(options), "opencode") }));
    env.OPENCODE_CONFIG_CONTENT = JSON.stringify(config);
    return env;
  }
  if (guard) config = deepMerge(config, guardConfig());
  env.OPENCODE_CONFIG_CONTENT = JSON.stringify(config);
  // opencode merges OPENCODE_PERMISSION after every config file, the repository's included.
  if (guard) env.OPENCODE_PERMISSION = JSON.stringify(deepMerge(parseJson(base.OPENCODE_PERMISSION, "OPENCODE_PERMISSION"), guardPermissionConfig()));
  return env;
}

function parseJson(text: string | undefined, name: string): Json {
  if (!text) return {};
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : {};
  } catch {
    throw new UsageError(`${name} is not valid JSON; fix or unset it before starting an instance.`);
  }
}

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

function deepMerge(base: Json, over: Json): Json {
  const out: Json = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    out[key] = isObject(current) && isObject(value) ? deepMerge(current, value) : value;
  }
  return out;
}
