// Every environment variable the server reads, validated in one place. A bad value stops the
// server at start with a message naming the variable and what it accepts.
import { homedir } from "node:os";
import { join } from "node:path";
import { DEFAULT_ROTATION, type Rotation } from "./core/governance/segments.js";

export const TOOLSETS = ["delegate", "approve", "sessions", "discover", "api", "instances", "audit", "workflows"] as const;
export type Toolset = (typeof TOOLSETS)[number];
export const DEFAULT_TOOLSETS: Toolset[] = ["delegate", "approve", "sessions", "discover", "api"];
/** What happens when a delegated agent asks a permission or a question (docs/governance.md). */
export const APPROVAL_MODES = ["elicit", "return", "deny"] as const;
export type ApprovalMode = (typeof APPROVAL_MODES)[number];

const list = (v: string | undefined) =>
  (v ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

// Checked by hand, not with zod: this runs on every start before the server answers its first
// request, and building and running a zod schema of 35 fields cost more than the rest of reading
// the configuration (docs/performance.md, "Start-up"). Each reader returns its value, or a problem.
type Read<T> = { value: T } | { problem: string };
type Reader<T> = (v: string | undefined) => Read<T>;

const optional: Reader<string | undefined> = (v) => ({ value: v });
const listed: Reader<string[]> = (v) => ({ value: list(v) });

const flag: Reader<boolean> = (v) => {
  if (v === undefined || v === "") return { value: false };
  if (/^(1|true|yes|on)$/i.test(v)) return { value: true };
  if (/^(0|false|no|off)$/i.test(v)) return { value: false };
  return { problem: `expected 1/0, true/false, yes/no or on/off, got "${v}"` };
};

const seconds =
  (fallback: number): Reader<number> =>
  (v) => {
    if (v === undefined || v === "") return { value: fallback };
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) return { problem: `expected a positive number of seconds, got "${v}"` };
    return { value: n };
  };

const positive =
  (fallback: number, what: string, integer = false): Reader<number> =>
  (v) => {
    if (v === undefined || v === "") return { value: fallback };
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) return { problem: `expected ${what}, got "${v}"` };
    return { value: n };
  };

/** An optional value that must pass `ok` when set (unset and empty always pass). */
const allowed =
  (ok: (v: string) => boolean, problem: string): Reader<string | undefined> =>
  (v) =>
    v === undefined || v === "" || ok(v) ? { value: v } : { problem };

const toolsets: Reader<Toolset[]> = (v) => {
  const names = list(v);
  if (names.length === 0) return { value: DEFAULT_TOOLSETS };
  const unknown = names.filter((n) => n !== "all" && !(TOOLSETS as readonly string[]).includes(n));
  if (unknown.length > 0) return { problem: `unknown toolset ${unknown.map((u) => `"${u}"`).join(", ")}; known: ${TOOLSETS.join(", ")} (or "all")` };
  return { value: names.includes("all") ? [...TOOLSETS] : (names as Toolset[]) };
};

// In this order a bad configuration's problems are listed.
const ENV = {
  OPENCODE_URL: allowed((v) => /^https?:\/\/[^\s]+$/.test(v), "expected an http(s) URL such as http://127.0.0.1:4096"),
  OPENCODE_PASSWORD: optional,
  OPENCODE_USERNAME: optional,
  OPENCODE_CONDUCTOR_DIRECTORY: optional,
  OPENCODE_CONDUCTOR_TOOLSETS: toolsets,
  OPENCODE_CONDUCTOR_READ_ONLY: flag,
  OPENCODE_CONDUCTOR_MODEL: optional,
  OPENCODE_CONDUCTOR_FALLBACK: listed,
  OPENCODE_CONDUCTOR_RETRY_TIMEOUT_S: seconds(90),
  OPENCODE_CONDUCTOR_MODEL_ALLOW: listed,
  OPENCODE_CONDUCTOR_MODEL_BLOCK: listed,
  OPENCODE_CONDUCTOR_INSTANCE_TTL_S: seconds(1800),
  OPENCODE_CONDUCTOR_WORKTREE_TTL_S: seconds(3600),
  OPENCODE_CONDUCTOR_STATE_DIR: optional,
  OPENCODE_CONDUCTOR_SANDBOX: allowed((v) => v === "srt", 'supported values: "srt" (or unset for no sandbox)'),
  OPENCODE_CONDUCTOR_AUDIT: optional,
  OPENCODE_CONDUCTOR_AUDIT_REQUIRED: flag,
  OPENCODE_CONDUCTOR_ROTATE_MB: positive(DEFAULT_ROTATION.maxBytes / 1024 / 1024, "a positive number of megabytes"),
  OPENCODE_CONDUCTOR_ROTATE_KEEP: positive(DEFAULT_ROTATION.keep, "a positive whole number of segments", true),
  OPENCODE_CONDUCTOR_APPROVALS: allowed(
    (v) => (APPROVAL_MODES as readonly string[]).includes(v),
    `expected one of ${APPROVAL_MODES.join(", ")} (or unset: elicit when the client supports it, else return)`,
  ),
  OPENCODE_CONDUCTOR_HTTP_TOKEN: optional,
  OPENCODE_CONDUCTOR_HTTP_SESSION_TTL_S: seconds(300),
  OPENCODE_CONDUCTOR_HTTP_MAX_SESSIONS: positive(100, "a positive whole number of sessions", true),
  OPENCODE_CONDUCTOR_HTTP_EVENTS_MB: positive(4, "a positive number of megabytes"),
  OPENCODE_CONDUCTOR_HTTP_REQUEST_TIMEOUT_S: seconds(30),
  OPENCODE_CONDUCTOR_HTTP_ORIGINS: optional,
  OPENCODE_CONDUCTOR_DEBUG: flag,
} satisfies Record<string, Reader<unknown>>;

type Env = { [K in keyof typeof ENV]: (typeof ENV)[K] extends Reader<infer T> ? T : never };

/** Every variable read, or every problem found (all at once, so that one start names them all). */
function readEnv(env: NodeJS.ProcessEnv): { env: Env } | { problems: string[] } {
  const values: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, read] of Object.entries(ENV) as Array<[string, Reader<unknown>]>) {
    const result = read(env[name]);
    if ("problem" in result) problems.push(`${name}: ${result.problem}`);
    else values[name] = result.value;
  }
  return problems.length > 0 ? { problems } : { env: values as Env };
}

export interface Config {
  opencodeUrl?: string;
  opencodePassword?: string;
  opencodeUsername?: string;
  directory?: string;
  toolsets: Toolset[];
  readOnly: boolean;
  defaultModel?: string;
  fallbackModels: string[];
  retryTimeoutS: number;
  modelAllow: string[];
  modelBlock: string[];
  instanceTtlS: number;
  /** A finished worktree task's checkout is removed after this long (its branch stays). */
  worktreeTtlS: number;
  stateDir: string;
  sandbox?: "srt";
  /** Path of the audit log, or undefined when `off`. */
  auditPath?: string;
  /** Refuse calls that can change files while the audit trail cannot be written (OPENCODE_CONDUCTOR_AUDIT_REQUIRED). */
  auditRequired: boolean;
  /** When the audit trail and the task records rotate, and how many old segments stay. */
  rotation: Rotation;
  httpToken?: string;
  /** An HTTP client's MCP session with no request for this long is closed (its client re-initializes). */
  httpSessionTtlS: number;
  /** Most 2025-11-25 HTTP sessions open at once; the next initialize is refused (503). */
  httpMaxSessions: number;
  /** What one HTTP session's replay store keeps at most, in bytes (the oldest events go first). */
  httpEventsBytes: number;
  /** An HTTP request's headers and body must arrive within this, or it gets 408. */
  httpRequestTimeoutS: number;
  /** Browser origins allowed besides loopback ones (`--http`), e.g. `https://app.example`. */
  httpOrigins: string[];
  /** Unset: elicit when the client declared elicitation, else return. `deny` cannot be loosened per call. */
  approvals?: ApprovalMode;
  /** Discovery and start-up steps on stderr as they happen (OPENCODE_CONDUCTOR_DEBUG). */
  debug?: boolean;
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = readEnv(env);
  if ("problems" in parsed) throw new ConfigError(`Invalid configuration:\n  ${parsed.problems.join("\n  ")}`);
  const e = parsed.env;
  const stateDir = e.OPENCODE_CONDUCTOR_STATE_DIR || join(env.XDG_STATE_HOME || join(homedir(), ".local", "state"), "opencode-conductor");
  const audit = e.OPENCODE_CONDUCTOR_AUDIT;
  if (audit === "off" && e.OPENCODE_CONDUCTOR_AUDIT_REQUIRED)
    throw new ConfigError(
      "Invalid configuration:\n  OPENCODE_CONDUCTOR_AUDIT_REQUIRED=1 needs an audit trail, but OPENCODE_CONDUCTOR_AUDIT=off: give the trail a path (or unset it for the default), or unset OPENCODE_CONDUCTOR_AUDIT_REQUIRED.",
    );
  return {
    opencodeUrl: e.OPENCODE_URL || undefined,
    opencodePassword: e.OPENCODE_PASSWORD || undefined,
    opencodeUsername: e.OPENCODE_USERNAME || undefined,
    directory: e.OPENCODE_CONDUCTOR_DIRECTORY || undefined,
    toolsets: e.OPENCODE_CONDUCTOR_TOOLSETS,
    readOnly: e.OPENCODE_CONDUCTOR_READ_ONLY,
    defaultModel: e.OPENCODE_CONDUCTOR_MODEL || undefined,
    fallbackModels: e.OPENCODE_CONDUCTOR_FALLBACK,
    retryTimeoutS: e.OPENCODE_CONDUCTOR_RETRY_TIMEOUT_S,
    modelAllow: e.OPENCODE_CONDUCTOR_MODEL_ALLOW,
    modelBlock: e.OPENCODE_CONDUCTOR_MODEL_BLOCK,
    instanceTtlS: e.OPENCODE_CONDUCTOR_INSTANCE_TTL_S,
    worktreeTtlS: e.OPENCODE_CONDUCTOR_WORKTREE_TTL_S,
    stateDir,
    sandbox: e.OPENCODE_CONDUCTOR_SANDBOX === "srt" ? "srt" : undefined,
    auditPath: audit === "off" ? undefined : audit || join(stateDir, "audit.jsonl"),
    auditRequired: e.OPENCODE_CONDUCTOR_AUDIT_REQUIRED,
    rotation: { maxBytes: Math.round(e.OPENCODE_CONDUCTOR_ROTATE_MB * 1024 * 1024), keep: e.OPENCODE_CONDUCTOR_ROTATE_KEEP },
    httpToken: e.OPENCODE_CONDUCTOR_HTTP_TOKEN || undefined,
    httpSessionTtlS: e.OPENCODE_CONDUCTOR_HTTP_SESSION_TTL_S,
    httpMaxSessions: e.OPENCODE_CONDUCTOR_HTTP_MAX_SESSIONS,
    httpEventsBytes: Math.round(e.OPENCODE_CONDUCTOR_HTTP_EVENTS_MB * 1024 * 1024),
    httpRequestTimeoutS: e.OPENCODE_CONDUCTOR_HTTP_REQUEST_TIMEOUT_S,
    httpOrigins: (e.OPENCODE_CONDUCTOR_HTTP_ORIGINS ?? "")
      .split(",")
      .map((o) => o.trim().replace(/\/+$/, ""))
      .filter(Boolean),
    approvals: (e.OPENCODE_CONDUCTOR_APPROVALS || undefined) as ApprovalMode | undefined,
    debug: e.OPENCODE_CONDUCTOR_DEBUG,
  };
}
