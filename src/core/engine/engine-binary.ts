// What a private instance needs of the opencode binary it starts, per major: how the inline config
// and the guard rails reach the server, whether a one-task server holds that task's rules, how to
// ask which sessions run, and how a person watches a session in the TUI. Each major's answers:
// v1/v1-binary.ts, v2/v2-binary.ts; binary.ts picks one.
import type { OpencodeClient } from "../../client/connect.js";
import type { OpencodeV2Client } from "../../client/v2/index.js";
import type { PermissionRule } from "../policy/permissions.js";
import type { Json } from "./inline-config.js";

/** What goes into a new server's config. */
export interface ConfigInput {
  /** The inline config so far: the caller's OPENCODE_CONFIG_CONTENT with the directory's extra config. */
  config: Json;
  /** The caller's environment (1.x also merges its OPENCODE_PERMISSION). */
  base: NodeJS.ProcessEnv;
  /** Whether the guard rails apply. */
  guard: boolean;
  /** opencode's own data dir, whose output files the guard allows again. */
  opencodeDataDir: string;
  /** The rules of the one task the server is for (only where `taskRulesInConfig`). */
  taskRules?: PermissionRule[];
}

/** A running instance as its status is asked; `v2` caches a 2.x client between checks. */
export interface StatusTarget {
  url: string;
  password: string;
  client: OpencodeClient;
  v2?: Promise<OpencodeV2Client> | undefined;
}

export interface EngineBinary {
  readonly major: 1 | 2;
  /** The variables that carry the config and the guard rails to the server (set over the caller's). */
  configEnv(input: ConfigInput): Record<string, string>;
  /** A server started for one task holds that task's rules in its config (2.x: the pre-release takes none per session). */
  readonly taskRulesInConfig: boolean;
  /** The guard rails go with each session's rules (1.x); otherwise they are in the server's config only. */
  readonly guardInSessionRules: boolean;
  /** The sessions that are busy or retrying, keyed by id. */
  activeSessions(target: StatusTarget): Promise<Record<string, unknown> | undefined>;
  /** The TUI command that watches `sessionId` on the server at `url`, and the variable it reads the password from. */
  attach(url: string, sessionId: string): { command: string; passwordVariable: string };
}
