// Every environment variable the server reads, validated in one place. A bad value stops the
// server at start with a message naming the variable and what it accepts.
import { homedir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
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

const flag = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v === "") return false;
    if (/^(1|true|yes|on)$/i.test(v)) return true;
    if (/^(0|false|no|off)$/i.test(v)) return false;
    ctx.addIssue({ code: "custom", message: `expected 1/0, true/false, yes/no or on/off, got "${v}"` });
    return z.NEVER;
  });

const seconds = (fallback: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === "") return fallback;
      const n = Number(v);
      if (!Number.isFinite(n) || n <= 0) {
        ctx.addIssue({ code: "custom", message: `expected a positive number of seconds, got "${v}"` });
        return z.NEVER;
      }
      return n;
    });

const positive = (fallback: number, what: string, integer = false) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === "") return fallback;
      const n = Number(v);
      if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
        ctx.addIssue({ code: "custom", message: `expected ${what}, got "${v}"` });
        return z.NEVER;
      }
      return n;
    });

const EnvSchema = z.object({
  OPENCODE_URL: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === "" || /^https?:\/\/[^\s]+$/.test(v), "expected an http(s) URL such as http://127.0.0.1:4096"),
  OPENCODE_PASSWORD: z.string().optional(),
  OPENCODE_USERNAME: z.string().optional(),
  OPENCODE_CONDUCTOR_DIRECTORY: z.string().optional(),
  OPENCODE_CONDUCTOR_TOOLSETS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      const names = list(v);
      if (names.length === 0) return DEFAULT_TOOLSETS;
      const unknown = names.filter((n) => n !== "all" && !(TOOLSETS as readonly string[]).includes(n));
      if (unknown.length > 0) {
        ctx.addIssue({ code: "custom", message: `unknown toolset ${unknown.map((u) => `"${u}"`).join(", ")}; known: ${TOOLSETS.join(", ")} (or "all")` });
        return z.NEVER;
      }
      return names.includes("all") ? [...TOOLSETS] : (names as Toolset[]);
    }),
  OPENCODE_CONDUCTOR_READ_ONLY: flag,
  OPENCODE_CONDUCTOR_MODEL: z.string().optional(),
  OPENCODE_CONDUCTOR_FALLBACK: z.string().optional().transform(list),
  OPENCODE_CONDUCTOR_RETRY_TIMEOUT_S: seconds(90),
  OPENCODE_CONDUCTOR_MODEL_ALLOW: z.string().optional().transform(list),
  OPENCODE_CONDUCTOR_MODEL_BLOCK: z.string().optional().transform(list),
  OPENCODE_CONDUCTOR_INSTANCE_TTL_S: seconds(1800),
  OPENCODE_CONDUCTOR_WORKTREE_TTL_S: seconds(3600),
  OPENCODE_CONDUCTOR_STATE_DIR: z.string().optional(),
  OPENCODE_CONDUCTOR_SANDBOX: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === "" || v === "srt", 'supported values: "srt" (or unset for no sandbox)'),
  OPENCODE_CONDUCTOR_AUDIT: z.string().optional(),
  OPENCODE_CONDUCTOR_AUDIT_REQUIRED: flag,
  OPENCODE_CONDUCTOR_ROTATE_MB: positive(DEFAULT_ROTATION.maxBytes / 1024 / 1024, "a positive number of megabytes"),
  OPENCODE_CONDUCTOR_ROTATE_KEEP: positive(DEFAULT_ROTATION.keep, "a positive whole number of segments", true),
  OPENCODE_CONDUCTOR_APPROVALS: z
    .string()
    .optional()
    .refine(
      (v) => v === undefined || v === "" || (APPROVAL_MODES as readonly string[]).includes(v),
      `expected one of ${APPROVAL_MODES.join(", ")} (or unset: elicit when the client supports it, else return)`,
    ),
  OPENCODE_CONDUCTOR_HTTP_TOKEN: z.string().optional(),
  OPENCODE_CONDUCTOR_HTTP_SESSION_TTL_S: seconds(300),
  OPENCODE_CONDUCTOR_HTTP_MAX_SESSIONS: positive(100, "a positive whole number of sessions", true),
  OPENCODE_CONDUCTOR_HTTP_EVENTS_MB: positive(4, "a positive number of megabytes"),
  OPENCODE_CONDUCTOR_HTTP_REQUEST_TIMEOUT_S: seconds(30),
  OPENCODE_CONDUCTOR_HTTP_ORIGINS: z.string().optional(),
  OPENCODE_CONDUCTOR_DEBUG: flag,
});

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
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n  ${lines.join("\n  ")}`);
  }
  const e = parsed.data;
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
