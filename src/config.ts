// Every environment variable the server reads, validated in one place. A bad value stops the
// server at start with a message naming the variable and what it accepts.
import { homedir } from "node:os";
import { join } from "node:path";
import { z } from "zod";

export const TOOLSETS = ["delegate", "approve", "sessions", "discover", "api", "instances", "audit"] as const;
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
  OPENCODE_CONDUCTOR_STATE_DIR: z.string().optional(),
  OPENCODE_CONDUCTOR_SANDBOX: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === "" || v === "srt", 'supported values: "srt" (or unset for no sandbox)'),
  OPENCODE_CONDUCTOR_AUDIT: z.string().optional(),
  OPENCODE_CONDUCTOR_APPROVALS: z
    .string()
    .optional()
    .refine(
      (v) => v === undefined || v === "" || (APPROVAL_MODES as readonly string[]).includes(v),
      `expected one of ${APPROVAL_MODES.join(", ")} (or unset: elicit when the client supports it, else return)`,
    ),
  OPENCODE_CONDUCTOR_HTTP_TOKEN: z.string().optional(),
  OPENCODE_CONDUCTOR_HTTP_SESSION_TTL_S: seconds(1800),
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
  stateDir: string;
  sandbox?: "srt";
  /** Path of the audit log, or undefined when `off`. */
  auditPath?: string;
  httpToken?: string;
  /** An HTTP client's MCP session with no request for this long is closed (its client re-initializes). */
  httpSessionTtlS: number;
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
    stateDir,
    sandbox: e.OPENCODE_CONDUCTOR_SANDBOX === "srt" ? "srt" : undefined,
    auditPath: audit === "off" ? undefined : audit || join(stateDir, "audit.jsonl"),
    httpToken: e.OPENCODE_CONDUCTOR_HTTP_TOKEN || undefined,
    httpSessionTtlS: e.OPENCODE_CONDUCTOR_HTTP_SESSION_TTL_S,
    httpOrigins: (e.OPENCODE_CONDUCTOR_HTTP_ORIGINS ?? "")
      .split(",")
      .map((o) => o.trim().replace(/\/+$/, ""))
      .filter(Boolean),
    approvals: (e.OPENCODE_CONDUCTOR_APPROVALS || undefined) as ApprovalMode | undefined,
    debug: e.OPENCODE_CONDUCTOR_DEBUG,
  };
}
