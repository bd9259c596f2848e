// The opencode 2.x background service's discovery file (docs/opencode-2x-behaviour.md, "The
// background service"): `opencode serve --service` writes `{id, version, url, pid, password}` with
// mode 0600 to `$XDG_STATE_HOME/opencode/service.json` (default `~/.local/state/opencode/`); builds of
// other release channels write `service-<channel>.json` next to it (the test suite's source build is
// channel `local`: `service-local.json`). The file holds the service's password: nothing read here
// may reach a message except through {@link describeRegistration}, which leaves it out.
import { lstat, readdir, readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { safeUrl } from "../errors.js";

export interface ServiceRegistration {
  /** The service instance's id (a UUID), when the release writes one. */
  id?: string;
  version?: string;
  url: string;
  pid: number;
  password?: string;
}

export type ServiceFileRead = { file: string; registration: ServiceRegistration } | { file: string; reason: string };

/** Larger than any real registration (~200 bytes): not read. */
const MAX_BYTES = 64 * 1024;

// Unknown keys are kept out (a later release may add some) but do not make the file invalid.
const Registration = z.object({
  id: z.string().max(200).optional(),
  version: z.string().max(200).optional(),
  url: z
    .string()
    .max(2_000)
    .refine((v) => /^https?:\/\/[^\s/]+/.test(v), "not an http(s) URL"),
  pid: z.number().int().positive(),
  password: z.string().max(4_000).optional(),
});

/** The folder of the discovery files: `$XDG_STATE_HOME/opencode`, else `$HOME/.local/state/opencode`. */
export function serviceStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const state = env.XDG_STATE_HOME || join(env.HOME || homedir(), ".local", "state");
  return join(state, "opencode");
}

/** The discovery files present, `service.json` (the released channels) first, then `service-*.json` by name. */
export async function serviceFiles(env: NodeJS.ProcessEnv = process.env): Promise<string[]> {
  const dir = serviceStateDir(env);
  const names = await readdir(dir).catch(() => [] as string[]);
  const others = names.filter((n) => /^service-[A-Za-z0-9._-]+\.json$/.test(n)).sort();
  return [...(names.includes("service.json") ? ["service.json"] : []), ...others].map((n) => join(dir, n));
}

/**
 * One discovery file, checked: a regular file of this user that nobody else can write (it decides
 * where the conductor sends work and a password), at most 64 KB, JSON with a URL and a pid.
 * Never throws: a file that cannot be used comes back with the reason.
 */
export async function readServiceFile(file: string): Promise<ServiceFileRead> {
  const info = await lstat(file).catch((error: NodeJS.ErrnoException) => error);
  if (info instanceof Error) return { file, reason: info.code === "ENOENT" ? "no such file" : `cannot be read (${info.code ?? info.message})` };
  if (!info.isFile()) return { file, reason: "not a regular file" };
  if (typeof process.getuid === "function" && info.uid !== process.getuid()) return { file, reason: `owned by another user (uid ${info.uid}): not trusted` };
  if ((info.mode & 0o022) !== 0) return { file, reason: `writable by others (mode ${(info.mode & 0o777).toString(8)}; opencode writes it 0600): not trusted` };
  if (info.size > MAX_BYTES) return { file, reason: `${info.size} bytes, too large for a discovery file` };
  const text = await readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => error);
  if (text instanceof Error) return { file, reason: `cannot be read (${text.code ?? text.message})` };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { file, reason: "not valid JSON" };
  }
  const parsed = Registration.safeParse(json);
  if (!parsed.success) {
    // Field names only: a value could be the password.
    const fields = [...new Set(parsed.error.issues.map((i) => i.path.join(".") || "(root)"))].join(", ");
    return { file, reason: `not an opencode service registration (bad or missing: ${fields}; expected {url, pid, password?, version?, id?})` };
  }
  const r = parsed.data;
  return {
    file,
    registration: {
      url: r.url.replace(/\/+$/, ""),
      pid: r.pid,
      ...(r.id !== undefined ? { id: r.id } : {}),
      ...(r.version !== undefined ? { version: r.version } : {}),
      ...(r.password !== undefined ? { password: r.password } : {}),
    },
  };
}

/** `http://127.0.0.1:49374 (pid 123, 2.0.26, with a password)`: for messages; never the password. */
export function describeRegistration(r: ServiceRegistration): string {
  return `${safeUrl(r.url).replace(/\/$/, "")} (pid ${r.pid}${r.version ? `, ${r.version}` : ""}, ${r.password !== undefined ? "with a password" : "no password"})`;
}
