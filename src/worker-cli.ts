// `opencode-conductor worker`: one worker of the fleet. It runs queued tasks against its own
// opencode (OPENCODE_URL, else an `opencode serve` it starts in its workspace and stops on exit),
// and walks detached workflow runs (walk jobs) beside them, with a concurrency of their own.
import { mkdir } from "node:fs/promises";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { spawnOpencode, type SpawnedOpencode } from "./client/spawn.js";
import type { Config } from "./config.js";
import { Conductor } from "./core/conductor.js";
import { TaskQueue } from "./core/queue/client.js";
import { FleetWorker } from "./core/queue/worker.js";
import { redacted } from "./core/queue/settings.js";
import { keepRunningOnClosedPipe } from "./closed-pipe.js";

export const WORKER_HELP = `Usage: opencode-conductor worker [--queue redis://HOST:PORT] [--concurrency N] [--walks N] [--workspace DIR]
         [--root DIR]... [--limit PROVIDER=N]... [--lock-s N] [--reattach-s N] [--id NAME] [--max-jobs N]

  --queue URL        the fleet's Redis (default: OPENCODE_CONDUCTOR_QUEUE)
  --concurrency N    tasks at once on this worker (default 4; 0: none, walks only)
  --walks N          workflow walks at once (detached runs, docs/workflows.md; default 2; 0: none),
                     apart from the tasks: a walk waits while the fleet runs its steps
  --workspace DIR    repo caches and task worktrees (default ./conductor-workspace)
  --root DIR         serve \`directory\` tasks under DIR (repeatable; this machine must see DIR)
  --limit P=N        fleet-wide: at most N running tasks of provider P at once (repeatable)
  --lock-s N         BullMQ job lock: a dead worker's task or walk moves on after about N s (default 30)
  --reattach-s N     how long an earlier attempt's opencode may not answer before its task is run
                     again instead of re-attached (default 30)
  --id NAME          worker name in oc_status (default HOST-PID-xxxx)
  --max-jobs N       take at most N jobs (tasks and walks), then exit 0 once they have ended (a pod
                     per task or per run: deploy/k8s/scaledjob/; default: run until stopped)

opencode: OPENCODE_URL (+ OPENCODE_PASSWORD), else \`opencode serve\` is started in the workspace.
Its URL and password go into the fleet's Redis, so other workers and MCP servers can reach the
sessions it runs (re-attach, oc_send, oc_session, approvals): give a URL they can reach.`;

function positive(name: string, raw: string | undefined, fallback: number, min = 1): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > 1000) throw new Error(`${name} must be an integer from ${min} to 1000 (got "${raw.slice(0, 40)}")`);
  return n;
}

function limits(list: string[] | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of list ?? []) {
    const m = /^([A-Za-z0-9._-]{1,80})=(\d{1,5})$/.exec(item);
    if (!m) throw new Error(`--limit takes PROVIDER=N, e.g. anthropic=8 (got "${item.slice(0, 80)}")`);
    out[m[1]!] = Number(m[2]);
  }
  return out;
}

export async function workerCommand(argv: string[], config: Config): Promise<number> {
  let values;
  try {
    values = parseArgs({
      args: argv,
      options: {
        queue: { type: "string" },
        concurrency: { type: "string" },
        walks: { type: "string" },
        workspace: { type: "string" },
        root: { type: "string", multiple: true },
        limit: { type: "string", multiple: true },
        "lock-s": { type: "string" },
        "reattach-s": { type: "string" },
        id: { type: "string" },
        "max-jobs": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    }).values;
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${WORKER_HELP}\n`);
    return 2;
  }
  if (values.help) return (void process.stdout.write(`${WORKER_HELP}\n`), 0);
  const url = values.queue ?? process.env.OPENCODE_CONDUCTOR_QUEUE;
  if (!url) {
    process.stderr.write(`opencode-conductor worker: no queue: give --queue redis://HOST:PORT or set OPENCODE_CONDUCTOR_QUEUE.\n`);
    return 2;
  }
  let concurrency: number, walks: number, lockS: number, reattachS: number, limitMap: Record<string, number>, maxJobs: number | undefined;
  try {
    concurrency = positive("--concurrency", values.concurrency, 4, 0);
    walks = positive("--walks", values.walks, 2, 0);
    if (concurrency === 0 && walks === 0) throw new Error("--concurrency 0 and --walks 0 would take nothing");
    lockS = positive("--lock-s", values["lock-s"], 30);
    reattachS = positive("--reattach-s", values["reattach-s"], 30);
    limitMap = limits(values.limit);
    maxJobs = values["max-jobs"] === undefined ? undefined : positive("--max-jobs", values["max-jobs"], 1);
  } catch (error) {
    process.stderr.write(`opencode-conductor worker: ${(error as Error).message}\n`);
    return 2;
  }
  // A Redis that is not there is an error now, before an opencode is started for nothing.
  const probe = new TaskQueue({ url });
  try {
    await probe.reachable();
  } catch (error) {
    process.stderr.write(`opencode-conductor worker: ${(error as Error).message}\n`);
    return 1;
  } finally {
    await probe.close();
  }
  const workspace = resolve(values.workspace ?? "conductor-workspace");
  await mkdir(workspace, { recursive: true });

  keepRunningOnClosedPipe(); // from here it owns an opencode and tasks: it stops on its signals only
  let spawned: SpawnedOpencode | undefined;
  let opencode = { url: config.opencodeUrl, password: config.opencodePassword, username: config.opencodeUsername };
  if (!opencode.url) {
    spawned = await spawnOpencode({ cwd: workspace });
    opencode = { url: spawned.url, password: spawned.password, username: undefined };
  }
  const conductor = new Conductor({
    url: opencode.url!,
    password: opencode.password,
    username: opencode.username,
    directory: workspace,
    defaultModel: config.defaultModel,
    fallbackModels: config.fallbackModels,
    retryTimeoutS: config.retryTimeoutS,
    modelAllow: config.modelAllow,
    modelBlock: config.modelBlock,
    queue: false, // the worker runs tasks here: never hand them back to the queue
  });
  const worker = new FleetWorker({
    queue: {
      url,
      prefix: process.env.OPENCODE_CONDUCTOR_QUEUE_PREFIX || undefined,
      ttlS: process.env.OPENCODE_CONDUCTOR_QUEUE_TTL_S ? Number(process.env.OPENCODE_CONDUCTOR_QUEUE_TTL_S) : undefined,
    },
    conductor,
    opencode: { url: opencode.url!, password: opencode.password, username: opencode.username },
    workspace,
    roots: values.root,
    concurrency,
    walks,
    auditPath: config.auditPath,
    limits: limitMap,
    lockMs: lockS * 1000,
    reattachMs: reattachS * 1000,
    id: values.id,
    maxJobs,
    log: (line) => process.stderr.write(`${line}\n`),
  });
  try {
    await worker.start();
  } catch (error) {
    process.stderr.write(`opencode-conductor worker: cannot start on ${redacted(url)}: ${(error as Error).message}\n`);
    await worker.close(true).catch(() => undefined);
    await spawned?.stop();
    return 1;
  }
  process.stderr.write(`worker ${worker.id} ready (queue ${redacted(url)}, opencode ${conductor.engine.url})\n`);

  let stopping = false;
  const stop = async (force: boolean) => {
    if (stopping && !force) return;
    stopping = true;
    process.stderr.write(force ? "worker: leaving running tasks to the fleet\n" : "worker: finishing running tasks (signal again to leave them)\n");
    await worker.close(force).catch(() => undefined);
    conductor.close();
    await spawned?.stop().catch(() => undefined);
    process.exit(0);
  };
  if (maxJobs !== undefined)
    void worker.drained.then(() => {
      process.stderr.write(`worker: ${maxJobs} job${maxJobs === 1 ? "" : "s"} ended (--max-jobs): stopping\n`);
      return stop(false);
    });
  process.on("SIGTERM", () => void stop(stopping));
  process.on("SIGINT", () => void stop(stopping));
  return -1; // keep running
}
