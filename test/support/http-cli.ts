// The built server over Streamable HTTP (`node dist/cli.js --http …`) as a child process, for tests
// that drive it with the SDK's client or a real client CLI.
import { spawn, type ChildProcess } from "node:child_process";
import { scratchEnv } from "./scratch-home.js";
import { once } from "node:events";
import { CLI } from "./mcp-client.js";
import { registerPid, unregisterPid } from "./registry.js";

export interface HttpCli {
  child: ChildProcess;
  /** `http://127.0.0.1:PORT/mcp`, from the server's own "listening on" line. */
  url: string;
  port: number;
  stderr(): string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `node dist/cli.js --http ...` and resolves on its "listening on" line, or rejects when it exits first. */
export async function startHttpCli(args: string[], env: Record<string, string>): Promise<HttpCli> {
  const child = spawn(process.execPath, [CLI, "--http", ...args], {
    env: { ...scratchEnv(), ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  registerPid(child.pid!, "dist/cli.js");
  const exit = once(child, "exit").then(([code, signal]) => {
    unregisterPid(child.pid!);
    return { code: code as number | null, signal: signal as NodeJS.Signals | null };
  });
  let stderr = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(stderr);
      if (match?.[1]) resolve(match[1]);
    });
    void exit.then((e) => reject(new Error(`exited (${e.code ?? e.signal}) before listening:\n${stderr}`)));
  });
  return { child, url, port: Number(new URL(url).port), stderr: () => stderr, exit };
}
