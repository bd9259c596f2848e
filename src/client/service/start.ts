// Starting the opencode 2.x background service: `opencode service start` makes sure one runs (it
// reuses a healthy one, else spawns `opencode serve --service` detached and waits until its
// discovery file answers) and prints its URL. The password is only in the discovery file, so the
// URL is matched against the files (discover.ts), which also proves the service is the one that
// answers there. The service is shared (TUI windows, other clients) and outlives this process on
// purpose: `opencode service stop` stops it.
import { execFile } from "node:child_process";
import { findService, type LiveService } from "./discover.js";

export interface StartServiceOptions {
  /** The 2.x CLI. */
  binary: string;
  /** Its environment: HOME / XDG_* decide where the discovery file goes. */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** `service start` waits up to ~2 minutes itself; default 150 s. */
  timeoutMs?: number;
}

export class ServiceStartError extends Error {
  override name = "ServiceStartError";
}

// Credentials of ours the shared service must not inherit (its own password is in its config).
const NOT_INHERITED = ["OPENCODE_PASSWORD", "OPENCODE_SERVER_PASSWORD", "OPENCODE_SERVER_USERNAME", "OPENCODE_CONDUCTOR_HTTP_TOKEN"];

export async function startService(options: StartServiceOptions): Promise<LiveService> {
  const env = { ...(options.env ?? process.env) };
  for (const name of NOT_INHERITED) delete env[name];
  const timeoutMs = options.timeoutMs ?? 150_000;
  const { code, stdout, stderr } = await run(options.binary, ["service", "start"], { env, ...(options.cwd ? { cwd: options.cwd } : {}), timeout: timeoutMs });
  const url = stdout
    .split("\n")
    .map((l) => l.trim())
    .reverse()
    .find((l) => /^https?:\/\/\S+$/.test(l));
  if (code !== 0 || !url) {
    const said = `${stderr}\n${stdout}`.trim().slice(-400);
    throw new ServiceStartError(
      `\`${options.binary} service start\` ${code === 0 ? "printed no URL" : code === null ? `did not finish within ${Math.round(timeoutMs / 1000)} s` : `exited with ${code}`}${said ? `: ${said}` : ""}`,
    );
  }
  const found = await findService({ env, url });
  if (!found.live) {
    const checks = found.checks.map((c) => c.result).join("; ") || "no discovery file";
    throw new ServiceStartError(
      `\`${options.binary} service start\` reported ${url}, but no discovery file in ${found.dir} describes a live service there (${checks}).`,
    );
  }
  return found.live;
}

function run(
  binary: string,
  args: string[],
  options: { env: NodeJS.ProcessEnv; cwd?: string; timeout: number },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(binary, args, { ...options, encoding: "utf8", maxBuffer: 1024 * 1024, killSignal: "SIGKILL" }, (error, stdout, stderr) => {
      const e = error as (NodeJS.ErrnoException & { code?: number | string; killed?: boolean }) | null;
      const code = !e ? 0 : e.killed ? null : typeof e.code === "number" ? e.code : 1;
      resolve({ code, stdout: stdout ?? "", stderr: stderr ?? "" });
    });
  });
}
