// The command a person runs to watch a session live in opencode's TUI. The password travels by
// environment only: the shell form reads it from the registry file at run time, so it never
// appears in tool output. Split from manager.ts (it needs only the registry's path).
import type { AttachCommand, Instance } from "./types.js";

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** The command to watch a session live in opencode's TUI; the password travels by env only. */
export function attachCommandFor(
  registryPath: string,
  instance: Pick<Instance, "url" | "pid" | "password"> & { major?: 1 | 2 },
  sessionId: string,
): AttachCommand {
  // 2.x has no `attach`: its TUI takes `--server` and the password from OPENCODE_PASSWORD.
  const v2 = instance.major === 2;
  const command = v2 ? `opencode --server ${instance.url} --session ${sessionId}` : `opencode attach ${instance.url} --session ${sessionId}`;
  const variable = v2 ? "OPENCODE_PASSWORD" : "OPENCODE_SERVER_PASSWORD";
  const read = `require(${JSON.stringify(registryPath)}).instances.find((i) => i.pid === ${instance.pid}).password`;
  const shell = `${variable}="$(node -p ${shellQuote(read)})" ${command}`;
  return { command, env: { [variable]: instance.password }, shell };
}
