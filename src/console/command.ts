// `opencode-conductor console [--port N] [--host H --token T] [--open]`: starts the console and
// prints its URL (with the sign-in token) on stdout, one line, so a parent process can read it.
import { spawn } from "node:child_process";
import { parseArgs } from "node:util";
import { keepRunningOnClosedPipe } from "../closed-pipe.js";
import type { Config } from "../config.js";
import { queueSettingsFromEnv } from "../core/queue/settings.js";
import { LOOPBACK } from "./auth.js";
import { startConsole } from "./server.js";

export const CONSOLE_USAGE = "opencode-conductor console [--port N] [--open] [--host H --token T]";

export async function consoleCommand(argv: string[], config: Config): Promise<number> {
  let values;
  try {
    values = parseArgs({
      args: argv,
      options: {
        port: { type: "string" },
        host: { type: "string" },
        token: { type: "string" },
        open: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    process.stderr.write(`${(error as Error).message.slice(0, 200)}\nUsage: ${CONSOLE_USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`Usage: ${CONSOLE_USAGE}\nA local web console for the work of every MCP server using state dir ${config.stateDir}.\n`);
    return 0;
  }
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`--port must be a port number, got "${String(values.port).slice(0, 40)}"\n`);
    return 2;
  }
  if (values.token !== undefined && values.token.length < 16) {
    process.stderr.write("--token must be at least 16 characters\n");
    return 2;
  }
  const host = values.host ?? "127.0.0.1";
  let running;
  keepRunningOnClosedPipe(); // the parent that reads the URL line may close the pipe after it
  try {
    running = await startConsole({ config, host, port, token: values.token, queue: queueSettingsFromEnv() });
  } catch (error) {
    process.stderr.write(`opencode-conductor console: ${(error as Error).message}\n`);
    return 2;
  }
  process.stdout.write(`${running.url}\n`);
  process.stderr.write(
    `opencode-conductor console: open the URL above (state dir ${config.stateDir}${LOOPBACK.has(host) ? "" : `, listening on ${host}`}); Ctrl-C stops it\n`,
  );
  if (values.open) openBrowser(running.url);
  const stop = () => void running.close().finally(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  // Started by an MCP server (OPENCODE_CONDUCTOR_CONSOLE=1) with a pipe on stdin: the pipe closes
  // when that server exits, even when it is killed, and the console goes with it.
  if (process.env.OPENCODE_CONDUCTOR_CONSOLE_CHILD === "1") process.stdin.on("end", stop).on("close", stop).resume();
  return -1;
}

function openBrowser(url: string): void {
  const opener = process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open";
  const child = spawn(opener, [url], { stdio: "ignore", detached: true });
  child.on("error", () => process.stderr.write(`opencode-conductor console: could not start ${opener}; open the URL yourself\n`));
  child.unref();
}
