// Finding a running opencode 2.x background service from its discovery files (file.ts): a file
// counts only when its pid is alive and the server at its URL, asked with its password, answers as
// opencode 2.x with that same pid (and version, when the file names one). That is the check opencode's
// own clients make (`/api/info` on 2.0.x, `/api/health` on the pre-release; detect.ts asks both).
// Anything else is skipped with the reason, for oc_status and the debug log; nothing here throws.
import { isProcessAlive } from "../discovery/processes.js";
import { detectServer, type ServerIdentity } from "../detect.js";
import { AuthError } from "../errors.js";
import { describeRegistration, readServiceFile, serviceFiles, serviceStateDir, type ServiceRegistration } from "./file.js";

export interface LiveService {
  file: string;
  registration: ServiceRegistration;
  identity: ServerIdentity;
}

export interface ServiceCheck {
  file: string;
  /** What was found, or why the file was not used (no password in it). */
  result: string;
  live?: LiveService;
}

export interface FindServiceOptions {
  /** Where HOME / XDG_STATE_HOME come from; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Per-probe timeout (ms); default 2 000, opencode's own. */
  timeoutMs?: number;
  /** Only files whose server has this URL (e.g. what `opencode service start` printed). */
  url?: string;
  fetch?: (request: Request) => Promise<Response>;
}

export interface FoundService {
  live?: LiveService;
  /** One entry per discovery file looked at, in order; `dir` when there was none. */
  checks: ServiceCheck[];
  dir: string;
}

/** The first live service among the discovery files (service.json first). */
export async function findService(options: FindServiceOptions = {}): Promise<FoundService> {
  const dir = serviceStateDir(options.env);
  const checks: ServiceCheck[] = [];
  for (const file of await serviceFiles(options.env)) {
    const check = await checkServiceFile(file, options);
    checks.push(check);
    if (check.live) return { live: check.live, checks, dir };
  }
  return { checks, dir };
}

export async function checkServiceFile(file: string, options: Omit<FindServiceOptions, "env"> = {}): Promise<ServiceCheck> {
  const read = await readServiceFile(file);
  if ("reason" in read) return { file, result: `ignored: ${read.reason}` };
  const r = read.registration;
  const what = describeRegistration(r);
  if (options.url !== undefined && sameUrl(options.url, r.url) === false) return { file, result: `ignored: ${what} is not the service at ${options.url}` };
  if (!isProcessAlive(r.pid)) return { file, result: `stale: ${what}: pid ${r.pid} is not running` };
  let identity: ServerIdentity;
  try {
    identity = await detectServer({
      url: r.url,
      ...(r.password !== undefined ? { password: r.password } : {}),
      timeoutMs: options.timeoutMs ?? 2_000,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
  } catch (error) {
    const why =
      error instanceof AuthError ? "refused the password in the file" : (error as Error).message.replace(/\s*(Check OPENCODE_URL\.?|Start one with .*)$/, "");
    return { file, result: `stale: ${what}: ${why}` };
  }
  if (identity.major !== 2) return { file, result: `ignored: ${what} answers as opencode ${identity.version}, not a 2.x service` };
  if (identity.pid !== r.pid) {
    return {
      file,
      result: `stale: ${what}: the server at that URL is ${identity.pid === undefined ? "a process that does not report its pid" : `pid ${identity.pid}`}, not the registered one`,
    };
  }
  if (r.version !== undefined && identity.version !== r.version) return { file, result: `stale: ${what}: the server there is ${identity.version}` };
  return { file, result: `live: ${what}`, live: { file, registration: r, identity } };
}

function sameUrl(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return a.replace(/\/+$/, "") === b.replace(/\/+$/, "");
  }
}
