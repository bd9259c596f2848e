// oc_api's answer: a large result cut to at most `max_chars` of JSON, kept valid JSON where it can
// (leading items of a list, or of the biggest list in an object), with a note on how to page or
// narrow (the operation's own paging and filter query parameters).
import type { ApiOperation } from "./catalog.js";
import { isObject } from "./check.js";

type Json = Record<string, unknown>;

const PAGING = ["limit", "cursor", "before", "after", "start", "order"];
const SCOPE = new Set(["directory", "workspace", "location"]);

function narrowHint(op: ApiOperation, maxChars: number, suggestLimit?: number): string {
  const names = Object.keys((op.query?.properties as Json | undefined) ?? {});
  const paging = names.filter((n) => PAGING.includes(n));
  const filters = names.filter((n) => !PAGING.includes(n) && !SCOPE.has(n));
  const parts: string[] = [];
  if (paging.length > 0)
    parts.push(
      `page with query ${paging.map((n) => `\`${n}\``).join(", ")}${paging.includes("limit") && suggestLimit !== undefined ? ` (e.g. query: {limit: ${Math.max(1, suggestLimit)}})` : ""}`,
    );
  if (filters.length > 0) parts.push(`narrow with query ${filters.map((n) => `\`${n}\``).join(", ")}`);
  parts.push(`raise max_chars (now ${maxChars})`);
  return `To see more: ${parts.join("; or ")}.`;
}

/** How many leading items of `items` fit in `budget` characters of JSON. */
function fitting(items: unknown[], budget: number): number {
  let used = 2;
  let n = 0;
  for (const item of items) {
    const len = (JSON.stringify(item) ?? "null").length + (n > 0 ? 1 : 0);
    if (used + len > budget) break;
    used += len;
    n += 1;
  }
  return n;
}

export interface Shaped {
  result: unknown;
  /** What the text answer shows. */
  json: string;
  truncated: boolean;
  chars: number;
  note?: string;
}

/** Cuts a large result to at most `maxChars` of JSON, keeping it valid JSON where it can. */
export function shape(op: ApiOperation, data: unknown, maxChars: number): Shaped {
  const result = data === undefined ? null : data;
  const json = JSON.stringify(result) ?? "null";
  if (json.length <= maxChars) return { result, json, truncated: false, chars: json.length };
  if (Array.isArray(result)) {
    const n = fitting(result, maxChars);
    if (n > 0) {
      const cut = result.slice(0, n);
      return {
        result: cut,
        json: JSON.stringify(cut),
        truncated: true,
        chars: json.length,
        note: `Showing ${n} of ${result.length} items. ${narrowHint(op, maxChars, n)}`,
      };
    }
  }
  if (isObject(result)) {
    // v2 lists wrap the array (`{data: [...], cursor}`): cut the biggest array and keep the rest.
    const arrays = Object.entries(result).filter((e): e is [string, unknown[]] => Array.isArray(e[1]));
    const biggest = arrays.sort((a, b) => JSON.stringify(b[1]).length - JSON.stringify(a[1]).length)[0];
    if (biggest) {
      const [key, items] = biggest;
      const rest = JSON.stringify({ ...result, [key]: [] }).length;
      const n = rest < maxChars ? fitting(items, maxChars - rest + 2) : 0;
      if (n > 0) {
        const cut = { ...result, [key]: items.slice(0, n) };
        return {
          result: cut,
          json: JSON.stringify(cut),
          truncated: true,
          chars: json.length,
          note: `Showing ${n} of ${items.length} items of "${key}". ${narrowHint(op, maxChars, n)}`,
        };
      }
    }
  }
  // Last resort: a text preview (of the raw text when opencode answered text, e.g. a diff).
  const preview = (typeof result === "string" ? result : json).slice(0, maxChars);
  return {
    result: preview,
    json: `${preview} …`,
    truncated: true,
    chars: json.length,
    note: `The result (${json.length} chars of JSON) is cut to a text preview of its first ${maxChars} chars. ${narrowHint(op, maxChars)}`,
  };
}
