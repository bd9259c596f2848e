// The MCP server's side of the console: the command that opens it (for oc_status and the startup
// log line), and with OPENCODE_CONDUCTOR_CONSOLE=1 a console child that lives as long as the server.
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

/** What to run to watch this server's work: the same state dir, so the state dir is named when it was set. */
export function consoleCommandLine(env: NodeJS.ProcessEnv = process.env): string {
  const dir = env.OPENCODE_CONDUCTOR_STATE_DIR;
  return `${dir ? `OPENCODE_CONDUCTOR_STATE_DIR=${JSON.stringify(dir)} ` : ""}npx opencode-conductor console --open`;
}

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
