// What the instance manager takes and hands out.
import type { OpencodeClient } from "../../client/connect.js";
import type { SpawnedOpencode } from "../../client/spawn.js";
import type { OpencodeV2Client } from "../../client/v2/index.js";
import type { PublicInstanceRow } from "./registry.js";
import type { Sandbox } from "./sandbox.js";

export type Json = Record<string, unknown>;

export interface InstanceManagerOptions {
  stateDir: string;
  /** Idle seconds (no busy session, no use) before an instance is stopped. */
  ttlS: number;
  /** opencode binary; default: the pinned one (see resolveOpencodeBinary). */
  binary?: string;
  /** Base environment of instances (default process.env); credentials are removed from it. */
  env?: NodeJS.ProcessEnv;
  /** Extra opencode config for a directory (e.g. a provider), merged under the guard config. */
  configFor?(directory: string): Json | undefined | Promise<Json | undefined>;
  /** Environment names to keep although they look like credentials (e.g. AWS_* for Bedrock). */
  keepEnv?: string[];
  /** Apply the guard rails (default true). */
  guard?: boolean;
  /** How long to wait for `opencode serve` to listen (default 120 s). */
  startTimeoutMs?: number;
  /** Run each instance in the srt OS sandbox (see src/core/instances/sandbox.ts); never unsandboxed if it fails. */
  sandbox?: "srt";
  /** Path of the srt binary; default: the installed package's, else `srt` on PATH. */
  srtBinary?: string;
  /** Hosts a sandboxed instance may reach besides loopback (default: DEFAULT_ALLOWED_DOMAINS). */
  sandboxAllowedDomains?: string[];
  /** Told about every server started and every one that ended (tests track pids with it). */
  onSpawn?(instance: Instance): void;
  onExit?(instance: Instance): void;
}

export interface Instance {
  directory: string;
  url: string;
  port: number;
  pid: number;
  /** Basic-auth password (user `opencode`). Keep it out of anything shown. */
  password: string;
  startedAt: Date;
  /** The binary's major: 2.x speaks only the v2 API (see `client`). */
  major: 1 | 2;
  /** A v1 client bound to the instance and its directory (of no use on a 2.x instance). */
  client: OpencodeClient;
  /** Resolves with the exit code or signal once the server ended and its registry row is gone. */
  exited: Promise<number | string>;
  /**
   * A 2.x server started for one task, with that task's rules in its config (2.x servers before
   * 2.0.26 take no rules per session): its sessions get none of their own.
   */
  rulesInConfig?: boolean;
}

export interface InstanceInfo extends PublicInstanceRow {
  /** Started by this conductor (only those can be stopped here while their conductor lives). */
  owned: boolean;
  /** Seconds since the last use, when known. */
  idleS?: number;
}

export interface AttachCommand {
  /** What to show: `opencode attach <url> --session <id>` (no password). */
  command: string;
  /** Environment for running `command` yourself (holds the password: do not show). */
  /** `OPENCODE_SERVER_PASSWORD` (1.x) or `OPENCODE_PASSWORD` (2.x). */
  env: Record<string, string>;
  /** A shell line that reads the password from the registry, safe to show. */
  shell: string;
}

/** An instance as the manager keeps it. */
export interface Managed extends Instance {
  server: SpawnedOpencode;
  sandbox?: Sandbox;
  lastUsed: number;
  lastPersisted: number;
  holds: number;
  /** Status checks in a row that got no answer. */
  unanswered: number;
  /** The v2 client of a 2.x instance, made on the first status check. */
  v2?: Promise<OpencodeV2Client>;
  stopping?: Promise<void>;
}
