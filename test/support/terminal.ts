// A client run in a terminal, as a person runs it: the command under a pseudo-terminal (util-linux
// `script`, with the window size a terminal emulator gives), its screen output collected, keys
// written to it, and at the end everything it started killed (the command leads its own session
// under `script`, so its MCP servers are not in script's process group: the kill follows the tree).
import { spawn } from "node:child_process";
import { once } from "node:events";
import { describeProcesses, killAll, processTree, untilGone } from "./process-tree.js";
import { registerPid, unregisterPid } from "./registry.js";

export interface Terminal {
  /** Everything written to the screen so far, escape sequences removed. */
  screen(): string;
  /** Types into the terminal (e.g. "\r" for Enter). */
  type(keys: string): void;
  /** How much has been written so far: a `since` for waitFor. */
  mark(): number;
  /** Resolves once the screen (from `since` on) matches, or rejects at the ceiling with the screen's tail. */
  waitFor(pattern: RegExp, ceilingMs: number, since?: number): Promise<void>;
  /** Ends the run: SIGKILLs the command and all it started, and checks they are gone. */
  close(): Promise<void>;
}

const COLUMNS = 160;
const ROWS = 50;

/** `sh` single quoting. */
const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;

/** Control sequences (CSI, OSC, charset selection) and carriage returns, which a screen shows as layout. */
// eslint-disable-next-line no-control-regex
const CONTROL = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]|\r/g;

/** A terminal UI moves the cursor right instead of writing spaces: shown as the spaces they stand for. */
// eslint-disable-next-line no-control-regex
const CURSOR_RIGHT = /\x1b\[(\d*)C/g;

export function startTerminal(command: string, args: string[], o: { env: Record<string, string>; cwd: string }): Terminal {
  const line = `stty cols ${COLUMNS} rows ${ROWS} && exec ${[command, ...args].map(quote).join(" ")}`;
  // -q: no banner; -f: flush at once; -e: the command's exit code; /dev/null: no typescript file.
  const child = spawn("script", ["-qfec", line, "/dev/null"], { env: o.env, cwd: o.cwd, detached: true, stdio: ["pipe", "pipe", "pipe"] });
  registerPid(child.pid!, "script");
  let raw = "";
  const waiters = new Set<() => void>();
  const onData = (c: Buffer) => {
    raw += c.toString("utf8");
    for (const w of waiters) w();
  };
  child.stdout!.on("data", onData);
  child.stderr!.on("data", onData);
  const exited = once(child, "exit");
  const screen = () => raw.replace(CURSOR_RIGHT, (_, n: string) => " ".repeat(Number(n || 1))).replace(CONTROL, "");
  return {
    screen,
    type(keys) {
      child.stdin!.write(keys);
    },
    mark: () => screen().length,
    waitFor(pattern, ceilingMs, since = 0) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!pattern.test(screen().slice(since))) return;
          cleanup();
          resolve();
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`the terminal did not show ${pattern} within ${ceilingMs} ms; its screen ends:\n${screen().slice(-3000)}`));
        }, ceilingMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    async close() {
      const tree = processTree(child.pid!);
      killAll(tree);
      await exited;
      const left = await untilGone(tree, 10_000);
      unregisterPid(child.pid!);
      if (left.length > 0) throw new Error(`still running after the terminal closed: ${describeProcesses(left)}`);
    },
  };
}
