// Arguments that MCP clients add to tool calls on their own, whatever the tool's schema says. They
// are accepted and dropped before the tool runs, so such a client can use the server at all; any
// other unknown argument is still refused (a typo like `wait` must not be ignored silently).
import { UsageError } from "../core/errors.js";

/** Key → which client sends it and why it is safe to drop. Listed in docs/tools.md. */
export const CLIENT_INJECTED_ARGUMENTS: Readonly<Record<string, string>> = {
  wait_for_previous:
    "Gemini CLI adds this boolean to every MCP tool it lists and its system prompt tells its model to set it; it only orders Gemini's own tool calls and means nothing to this server.",
};

/** Most characters of the caller's bad keys quoted back in an error. */
const MAX_QUOTED = 200;

/**
 * The arguments without the client-injected keys; throws a UsageError naming the tool's real
 * arguments when any other key is not one of them.
 */
export function acceptedArguments(tool: string, known: readonly string[], args: Record<string, unknown>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  const unknown: string[] = [];
  for (const [key, value] of Object.entries(args)) {
    if (known.includes(key)) kept[key] = value;
    else if (!Object.hasOwn(CLIENT_INJECTED_ARGUMENTS, key)) unknown.push(key);
  }
  if (unknown.length > 0) throw new UsageError(`${tool} does not take ${quoted(unknown)}. Its arguments: ${known.join(", ")}.`);
  return kept;
}

/** The unknown keys in backticks, cut so the whole quote stays within MAX_QUOTED characters. */
function quoted(keys: string[]): string {
  let out = keys.map((key) => `\`${key}\``).join(", ");
  if (out.length > MAX_QUOTED) out = `${out.slice(0, MAX_QUOTED)}… (${keys.length} unknown argument${keys.length === 1 ? "" : "s"})`;
  return out;
}
