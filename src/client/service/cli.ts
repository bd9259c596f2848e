// What an opencode CLI binary is, asked before starting it: its major (1.x `opencode --version`
// prints `1.18.33`; the 2.x CLI prints `opencode v2.0.26`, the source build `opencode2
// v2.0.0-src.b622626`) and whether it has the `service` command of 2.x. The help is read rather
// than trying `service start`: a 2.x CLI without the command takes an unknown word for a directory
// to open its TUI in.
import { execFile } from "node:child_process";
import { scratchFor } from "../scratch.js";

export interface CliInfo {
  major: 1 | 2 | undefined;
  version: string | undefined;
  /** `opencode service start|stop|status …` is there (2.x). */
  hasService: boolean;
}

const cache = new Map<string, Promise<CliInfo>>();

/** Asks the binary (`--version`, and `--help` on 2.x); cached per binary and PATH. Never throws. */
export function cliInfo(binary: string, env: NodeJS.ProcessEnv = process.env): Promise<CliInfo> {
  const key = `${binary}\0${env.PATH ?? ""}`;
  let pending = cache.get(key);
  if (!pending) {
    pending = probe(binary, env);
    cache.set(key, pending);
  }
  return pending;
}

async function probe(binary: string, env: NodeJS.ProcessEnv): Promise<CliInfo> {
  const version = parseCliVersion(await output(binary, ["--version"], env));
  const major = version ? majorOf(version) : undefined;
  const hasService = major === 2 && hasServiceCommand(await output(binary, ["--help"], env));
  return { major, version, hasService };
}

/** The version in `--version` output, e.g. `2.0.26` from `opencode v2.0.26`. */
export function parseCliVersion(text: string): string | undefined {
  return /\bv?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\b/.exec(text)?.[1];
}

/** True when the help lists a `service` subcommand (a line `  service   Manage the background server`). */
export function hasServiceCommand(help: string): boolean {
  return /^\s+service\s{2,}\S/m.test(help);
}

function majorOf(version: string): 1 | 2 | undefined {
  const major = Number.parseInt(version, 10);
  return major === 1 || major === 2 ? major : undefined;
}

/** Runs the binary in a temp folder of its own: some releases unpack a native library even for `--version`. */
function output(binary: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const scratch = scratchFor(env);
  return new Promise((resolve) => {
    execFile(binary, args, { env: scratch.env, timeout: 15_000, maxBuffer: 1024 * 1024, encoding: "utf8" }, (_error, stdout, stderr) => {
      scratch.remove();
      resolve(`${stdout ?? ""}\n${stderr ?? ""}`);
    });
  });
}
