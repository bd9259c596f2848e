// The policy for unattended work: nobody is there to answer a prompt, so nothing may `ask`. Reading,
// editing and the shell are allowed; publishing (git push, gh, npm publish …), rewriting remotes or
// history, the network tools, questions and paths outside the project are denied. It is applied
// twice, because either layer alone can be undone: as session rules (opencode evaluates the agent's
// rules, then the session's, and the LAST matching rule wins, so ours come last) and as the instance
// server's config (so sessions made on the instance without our rules, and sub-agent sessions, are
// bound too). Plus an environment without credentials, so a push that slips through still fails.
import type { PermissionRule } from "./permissions.js";

/**
 * Shell commands denied on guarded work, as word prefixes. opencode splits a command line into its
 * commands (`a && git push` is checked as `a` and `git push`), and each is matched on its own.
 */
export const DENIED_COMMANDS = [
  "git push",
  "git remote",
  "git reset --hard",
  "git reset * --hard",
  "gh",
  "npm publish",
  "pnpm publish",
  "yarn publish",
  "yarn npm publish",
];

/** Tools denied outright: the network, questions nobody answers, mode switches that ask. */
export const DENIED_TOOLS = ["webfetch", "websearch", "codesearch", "question", "plan_enter", "plan_exit", "doom_loop"];

// Where a denied command may hide inside one opencode command: behind a wrapper or assignment
// (`sudo gh`, `FOO=1 git push`), inside a quoted `sh -c '…'`, after `;`/`&`/`|`/`(`/`` ` `` in such a
// string, or run by absolute path (`/usr/bin/git push`). Best effort: the credentials are gone anyway.
const SEPARATORS = [" ", "'", '"', ";", "&", "|", "(", "`", "/"];

/**
 * opencode wildcard patterns (`*` any text; a trailing ` *` also matches nothing, so `gh *` matches
 * `gh` and `gh pr create` but not `ghc`) that deny `command` at the start of a command, or after a
 * separator inside one. A multi-word command ends anywhere there (`sh -c "git push"`); a single word
 * must end at a space or closing quote, so `'ghost'` stays allowed.
 */
export function commandPatterns(command: string): string[] {
  if (command.includes(" ")) return [`${command} *`, ...SEPARATORS.map((s) => `*${s}${command}*`)];
  return [`${command} *`, ...SEPARATORS.map((s) => `*${s}${command} *`), `*'${command}'*`, `*"${command}"*`];
}

export interface GuardOptions {
  /**
   * Start with `* allow` so no agent, user or repository `ask` rule can stall the turn (default).
   * This also lifts restrictions of read-only agents such as `plan`: pass false when running one.
   */
  allowAll?: boolean;
  /** opencode's data dir ($XDG_DATA_HOME/opencode) of the server: its tool-output files stay readable. */
  opencodeDataDir?: string;
  /**
   * The caller's own rules (e.g. the `readonly` preset): placed after `* allow` and before the
   * denials, so they can restrict further but never lift a denial.
   */
  userRules?: PermissionRule[];
}

/** The guard as session rules (for `session.create` / `session.update` `permission`). */
export function guardRules(options: GuardOptions = {}): PermissionRule[] {
  const rule = (permission: string, pattern: string, action: PermissionRule["action"]): PermissionRule => ({ permission, pattern, action });
  return [
    ...(options.allowAll === false ? [] : [rule("*", "*", "allow")]),
    ...(options.userRules ?? []),
    // opencode asks before reading .env files by default; unattended, a secret file is simply off limits.
    rule("read", "*.env", "deny"),
    rule("read", "*.env.*", "deny"),
    rule("read", "*.env.example", "allow"),
    ...DENIED_COMMANDS.flatMap(commandPatterns).map((p) => rule("bash", p, "deny")),
    rule("external_directory", "*", "deny"),
    // Long outputs are saved under opencode's data dir and the agent is told to read them there.
    ...(options.opencodeDataDir ? [rule("external_directory", `${options.opencodeDataDir.replace(/\/+$/, "")}/tool-output/*`, "allow")] : []),
    ...DENIED_TOOLS.map((t) => rule(t, "*", "deny")),
  ];
}

/**
 * The guard as an opencode config `permission` object (schema `PermissionConfig`: a tool name maps to
 * an action, or to `{pattern: action}` whose entries become rules in key order). It holds only
 * denials and turns opencode's own `ask` defaults (doom_loop, external_directory, read *.env) into
 * denials; it adds no `* allow`, so agents keep their own limits (plan stays read-only).
 */
export function guardPermissionConfig(): Record<string, string | Record<string, string>> {
  const bash: Record<string, string> = {};
  for (const pattern of DENIED_COMMANDS.flatMap(commandPatterns)) bash[pattern] = "deny";
  return {
    read: { "*.env": "deny", "*.env.*": "deny", "*.env.example": "allow" },
    bash,
    external_directory: "deny",
    ...Object.fromEntries(DENIED_TOOLS.map((t) => [t, "deny"])),
  };
}

/** Config fragment for a guarded server: the permission floor, and nothing shared or updated. */
export function guardConfig(): Record<string, unknown> {
  return { permission: guardPermissionConfig(), share: "disabled", autoupdate: false };
}

// ---------------------------------------------------------------------------------------------
// Environment

/** Removed even though some look like provider keys: they grant pushes, publishes or infrastructure. */
const REMOVE = new Set([
  "GH_TOKEN",
  "GITHUB_TOKEN",
  "GH_ENTERPRISE_TOKEN",
  "GITHUB_ENTERPRISE_TOKEN",
  "GITLAB_TOKEN",
  "GL_TOKEN",
  "NPM_TOKEN",
  "NODE_AUTH_TOKEN",
  "SSH_AUTH_SOCK",
  "SSH_AGENT_PID",
  "GIT_ASKPASS",
  "SSH_ASKPASS",
  "CLOUDFLARE_API_TOKEN",
  "DIGITALOCEAN_ACCESS_TOKEN",
  "DATABRICKS_TOKEN",
  "GOOGLE_APPLICATION_CREDENTIALS",
  "KUBECONFIG",
  "DOCKER_AUTH_CONFIG",
  "OPENCODE_PASSWORD",
  "OPENCODE_SERVER_PASSWORD",
  "OPENCODE_CONDUCTOR_HTTP_TOKEN",
]);
const REMOVE_PREFIXES = ["AWS_", "AZURE_CLIENT_", "ARM_CLIENT_", "TF_TOKEN_", "VAULT_", "TWINE_", "PYPI_", "CARGO_REGISTRY_", "GEM_HOST_"];

/** Provider settings opencode reads from the environment (models.dev `env`) that do not end in _API_KEY. */
const PROVIDER_ENV = new Set([
  "ABLIT_KEY",
  "AICORE_SERVICE_KEY",
  "AZURE_RESOURCE_NAME",
  "AZURE_COGNITIVE_SERVICES_RESOURCE_NAME",
  "BAILING_API_TOKEN",
  "CLARIFAI_PAT",
  "CLOUDFLARE_ACCOUNT_ID",
  "CLOUDFLARE_GATEWAY_ID",
  "DATABRICKS_HOST",
  "FRIENDLI_TOKEN",
  "GOOGLE_VERTEX_LOCATION",
  "GOOGLE_VERTEX_PROJECT",
  "HF_TOKEN",
  "MODAL_PROXY_TOKEN",
  "NEON_AI_GATEWAY_BASE_URL",
  "NEON_AI_GATEWAY_TOKEN",
  "RUNINFRA_GATEWAY_KEY",
  "SNOWFLAKE_ACCOUNT",
  "SNOWFLAKE_CORTEX_PAT",
  "WATSONX_AI_APIKEY",
  "WATSONX_AI_PROJECT_ID",
  "ZENIFRA_AI_KEY",
]);

const LOOKS_SECRET = /TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|PRIVATE_KEY|(^|_)PAT$|(^|_)AUTH($|_)|COOKIE|SESSION_KEY/i;

/** Why `name` is left out of a guarded environment, or undefined when it is kept. */
export function envRemovalReason(name: string, keep: readonly string[] = []): string | undefined {
  const upper = name.toUpperCase();
  if (keep.includes(name)) return undefined;
  if (REMOVE.has(upper) || REMOVE_PREFIXES.some((p) => upper.startsWith(p))) return "credential";
  if (/_API_?KEY$/.test(upper) || PROVIDER_ENV.has(upper)) return undefined; // a model provider's key
  if (LOOKS_SECRET.test(upper)) return "looks like a secret";
  return undefined;
}

/**
 * `baseEnv` without credentials that could push, publish or reach infrastructure (model provider
 * keys stay: opencode needs them; names in `keep` stay too), with git unable to prompt, use ssh or a
 * credential helper.
 */
export function guardedEnv(baseEnv: NodeJS.ProcessEnv, options: { keep?: readonly string[] } = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(baseEnv)) {
    if (value !== undefined && envRemovalReason(name, options.keep) === undefined) env[name] = value;
  }
  env.GIT_TERMINAL_PROMPT = "0";
  env.GIT_SSH_COMMAND = "false";
  env.GCM_INTERACTIVE = "never";
  // An empty credential.helper resets the helper list (from every config file) to none. It is
  // appended after any GIT_CONFIG_* entries the caller had, so none of theirs can come back after it.
  const count = Number(env.GIT_CONFIG_COUNT);
  const n = Number.isInteger(count) && count > 0 ? count : 0;
  env[`GIT_CONFIG_KEY_${n}`] = "credential.helper";
  env[`GIT_CONFIG_VALUE_${n}`] = "";
  env.GIT_CONFIG_COUNT = String(n + 1);
  return env;
}
