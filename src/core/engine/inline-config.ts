// opencode's inline config (OPENCODE_CONFIG_CONTENT, and 1.x's OPENCODE_PERMISSION): read from the
// caller's environment and merged, for both majors' start environments (see binary.ts).
import { UsageError } from "../errors.js";

export type Json = Record<string, unknown>;

export const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** The JSON object in the variable `name` (none: `{}`); anything but valid JSON stops the start. */
export function parseConfigJson(text: string | undefined, name: string): Json {
  if (!text) return {};
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : {};
  } catch {
    throw new UsageError(`${name} is not valid JSON; fix or unset it before starting an instance.`);
  }
}

/** `over` merged into `base`, objects key by key, anything else replaced. */
export function deepMerge(base: Json, over: Json): Json {
  const out: Json = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    out[key] = isObject(current) && isObject(value) ? deepMerge(current, value) : value;
  }
  return out;
}
