// Secrets never leave the core: opencode hands back provider keys, `options.apiKey`, auth headers
// and MCP environments verbatim (config.get, config.providers, provider.list), so anything shown to a
// caller from those routes goes through here first.

export const REDACTED = "[redacted]";

/** Keys whose value is a secret (or holds secrets). */
const SECRET_KEY = /key|token|secret|password|authorization|cookie/i;
/** Maps whose values are secrets whatever their names: HTTP headers and environment variables. */
const SECRET_MAP = new Set(["headers", "env", "environment"]);
/** Names that match SECRET_KEY but hold nothing secret (keyboard shortcuts). */
const NOT_SECRET = new Set(["keybinds"]);

/**
 * A deep copy of `value` with secrets replaced by "[redacted]": every string under a key matching
 * /key|token|secret|password|authorization|cookie/i or inside `headers`/`env`/`environment` maps,
 * and credentials embedded in URLs. Numbers and booleans stay (token counts, `apiKeyRequired: true`),
 * and so do arrays of names (a provider's `env: ["OPENAI_API_KEY"]` lists variable names, not values).
 */
export function redact<T>(value: T): T {
  return walk(value, false) as T;
}

function walk(value: unknown, secret: boolean): unknown {
  if (typeof value === "string") return secret && value !== "" ? REDACTED : stripUrlCredentials(value);
  if (Array.isArray(value)) return value.map((item) => walk(item, secret));
  if (!value || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    const isSecret = secret || (!NOT_SECRET.has(key) && SECRET_KEY.test(key));
    const isSecretMap = SECRET_MAP.has(key) && !!child && typeof child === "object" && !Array.isArray(child);
    out[key] = walk(child, isSecret || isSecretMap);
  }
  return out;
}

/** `https://user:pass@host/…` → `https://host/…`; other strings unchanged. */
function stripUrlCredentials(text: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\/[^/@\s]+@/i.test(text) ? text.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@\s]+@/i, "$1") : text;
}
