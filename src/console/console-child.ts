// The MCP server's side of the console: the command that opens it (for oc_status and the startup
// log line), and with OPENCODE_CONDUCTOR_CONSOLE=1 a console child that lives as long as the server.
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
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

export interface ConsoleChild {
  pid: number | undefined;
  /** The console's URL with its sign-in token, once it listens. */
  url: Promise<string>;
  stop(): void;
}

/**
 * Starts `opencode-conductor console` as a child of this process (same binary, same environment).
 * Its stdin is a pipe from us: when we exit, however we exit, it closes and the console stops.
 */
export function startConsoleChild(cliPath: string, env: NodeJS.ProcessEnv = process.env): ConsoleChild {
  const child: ChildProcess = spawn(process.execPath, [cliPath, "console"], {
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...env, OPENCODE_CONDUCTOR_CONSOLE: "", OPENCODE_CONDUCTOR_CONSOLE_CHILD: "1" },
  });
  const url = new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once("line", (line) => resolve(line.trim()));
    let err = "";
    child.stderr!.on("data", (chunk: Buffer) => (err = (err + chunk.toString()).slice(-400)));
    child.once("exit", (code) => reject(new Error(`the console exited (${code}) before it listened: ${err.trim()}`)));
    child.once("error", reject);
  });
  url.catch(() => undefined);
  return {
    pid: child.pid,
    url,
    stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
    },
  };
}
