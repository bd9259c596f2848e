// The command a person runs to watch a session live in opencode's TUI. The password travels by
// environment only: the shell form reads it from the registry file at run time, so it never
// appears in tool output. Split from manager.ts (it needs only the registry's path).
import { binaryOf } from "../engine/binary.js";
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
  // The command and the password's variable are the binary's (2.x has no `attach`).
  const { command, passwordVariable: variable } = binaryOf(instance.major).attach(instance.url, sessionId);
  const read = `require(${JSON.stringify(registryPath)}).instances.find((i) => i.pid === ${instance.pid}).password`;
  const shell = `${variable}="$(node -p ${shellQuote(read)})" ${command}`;
  return { command, env: { [variable]: instance.password }, shell };
}
