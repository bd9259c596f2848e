// The MCP server's side of the console that every start needs: the command that opens it (for
// oc_status and the startup log line). The console child is console-child.ts.
import { detectLaunch, type Launch } from "../install/launch-command.js";

/**
 * What to run to watch this server's work: this installation's own command (a clone's `node
 * …/dist/cli.js`, a global install's `opencode-conductor`, npx only when it was started by npx),
 * so the line runs as printed; the same state dir, named when it was set.
 */
export function consoleCommandLine(env: NodeJS.ProcessEnv = process.env, launch: Launch = detectLaunch(undefined, env.PATH ?? "")): string {
  const dir = env.OPENCODE_CONDUCTOR_STATE_DIR;
  const command = [launch.command, ...launch.args].map(shellWord).join(" ");
  return `${dir ? `OPENCODE_CONDUCTOR_STATE_DIR=${JSON.stringify(dir)} ` : ""}${command} console --open`;
}

/** A word as a POSIX shell reads it back: plain when it is safe, else double-quoted. */
const shellWord = (word: string) => (/^[\w./@:=+-]+$/.test(word) ? word : JSON.stringify(word));
