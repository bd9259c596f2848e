// With OPENCODE_CONDUCTOR_CONSOLE=1, the MCP server's console: a child that lives as long as the
// server. Loaded only then (node:child_process and node:readline cost a start a few ms); the command
// that opens a console is console-command-line.ts.
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

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
