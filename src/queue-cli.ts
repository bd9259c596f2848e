// `opencode-conductor queue ls|show|cancel|limit`: the fleet's queue for people at a terminal.
import { parseArgs } from "node:util";
import { TaskQueue } from "./core/queue/client.js";
import { attemptsLine } from "./core/queue/outcome.js";
import { queueSettingsFromEnv, redacted } from "./core/queue/settings.js";
import { backlog } from "./core/queue/status.js";
import { parseListen, serveBacklog } from "./queue-metrics.js";

const REDIS_TIMEOUT_MS = 5_000;

export const QUEUE_HELP = `Usage: opencode-conductor queue ls [--limit N] [--json]
       opencode-conductor queue show TASK_ID [--json]
       opencode-conductor queue cancel TASK_ID
       opencode-conductor queue limit PROVIDER=N      (0 removes the limit)
       opencode-conductor queue metrics [--listen [HOST:]PORT]
                 the jobs waiting for a worker (wait, prioritized, delayed) on every queue, as JSON;
                 with --listen, served at GET /backlog for KEDA's metrics-api trigger
The queue: --queue redis://HOST:PORT or OPENCODE_CONDUCTOR_QUEUE.`;

export async function queueCommand(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        queue: { type: "string" },
        json: { type: "boolean" },
        limit: { type: "string" },
        listen: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${QUEUE_HELP}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [verb, arg] = positionals;
  if (values.help || !verb) return (void process.stdout.write(`${QUEUE_HELP}\n`), values.help ? 0 : 2);
  if (!["ls", "show", "cancel", "limit", "metrics"].includes(verb)) {
    process.stderr.write(`opencode-conductor queue: unknown command "${verb.slice(0, 40)}": use ls, show, cancel, limit or metrics.\n\n${QUEUE_HELP}\n`);
    return 2;
  }
  let listen: { host: string; port: number } | undefined;
  try {
    listen = values.listen === undefined ? undefined : parseListen(values.listen);
  } catch (error) {
    process.stderr.write(`opencode-conductor queue: ${(error as Error).message}\n`);
    return 2;
  }
  let settings;
  try {
    settings = queueSettingsFromEnv(values.queue ? { ...process.env, OPENCODE_CONDUCTOR_QUEUE: values.queue } : process.env);
  } catch (error) {
    process.stderr.write(`opencode-conductor queue: ${(error as Error).message}\n`);
    return 2;
  }
  if (!settings) {
    process.stderr.write("opencode-conductor queue: no queue: give --queue redis://HOST:PORT or set OPENCODE_CONDUCTOR_QUEUE.\n");
    return 2;
  }
  const q = new TaskQueue(settings);
  // Commands wait through a Redis restart; at a terminal, a Redis that is not there is an error.
  let timer: NodeJS.Timeout | undefined;
  const reachable = await Promise.race([q.redis.ping().then(() => true), new Promise<false>((r) => (timer = setTimeout(() => r(false), REDIS_TIMEOUT_MS)))]);
  clearTimeout(timer);
  if (!reachable) {
    process.stderr.write(
      `opencode-conductor queue: Redis at ${redacted(settings.url)} did not answer within ${REDIS_TIMEOUT_MS / 1000} s: is it running, and is the URL right?\n`,
    );
    await q.close();
    return 1;
  }
  const out = (s: string) => process.stdout.write(`${s}\n`);
  let keep = false; // metrics --listen keeps the connection while it serves
  try {
    if (verb === "ls") {
      const status = await q.status();
      const rows = await q.list(values.limit ? Math.max(1, Math.min(1000, Number(values.limit) || 50)) : 50);
      if (values.json) return (out(JSON.stringify({ ...status, tasks: rows }, null, 2)), 0);
      const c = status.counts;
      out(
        `queue ${status.url} (prefix ${status.prefix}): ${c.waiting} waiting, ${c.active} active, ${c.delayed} delayed, ${c.completed} completed, ${c.failed} failed`,
      );
      const w = status.walks;
      if (w.waiting + w.active + w.delayed + w.completed + w.failed > 0)
        out(`walks (detached workflow runs): ${w.waiting} waiting, ${w.active} active, ${w.delayed} delayed, ${w.completed} completed, ${w.failed} failed`);
      out(`workers: ${status.workers.length ? "" : "none"}`);
      for (const w of status.workers)
        out(`  ${w.id} on ${w.host}: ${w.running}/${w.concurrency} running, roots ${w.roots.join(", ") || "(none)"}, heartbeat ${w.heartbeat}`);
      if (Object.keys(status.limits).length)
        out(
          `limits: ${Object.entries(status.limits)
            .map(([p, n]) => `${p}=${n}`)
            .join(", ")}`,
        );
      for (const r of rows) out(`${r.id}\t${r.state}\t${r.queue}\t${new Date(r.enqueuedAt).toISOString()}\t${r.title}`);
      return 0;
    }
    if (verb === "show" || verb === "cancel") {
      if (!arg) throw new Error(`queue ${verb} needs a task id (queue ls lists them).`);
      const r = verb === "show" ? await q.read(arg) : await q.cancel(arg);
      if (values.json) return (out(JSON.stringify(r, null, 2)), 0);
      out(`${r.task.id}: ${r.task.state} · status ${r.status} · ${attemptsLine(r.task.attempts)}`);
      if (r.sessionId) out(`session ${r.sessionId}${r.task.worker ? ` on worker ${r.task.worker}` : ""}`);
      if (r.error) out(`${r.error.name}: ${r.error.message}`);
      if (r.answer) out(`\n${r.answer}`);
      if (r.task.repo)
        out(
          `\nrepo ${r.task.repo.url} @ ${r.task.repo.base.slice(0, 12)}: ${r.task.repo.files.length} files changed${r.task.repo.branch ? `, branch ${r.task.repo.branch}${r.task.repo.pushed ? " pushed" : ` NOT pushed: ${r.task.repo.pushError}`}` : ""}`,
        );
      return 0;
    }
    if (verb === "metrics") {
      if (!listen) return (out(JSON.stringify(await backlog(q))), 0);
      const { server, url } = await serveBacklog(q, listen.host, listen.port);
      process.stderr.write(`opencode-conductor queue metrics: serving ${url}\n`);
      const stop = () => server.close(() => void q.close().finally(() => process.exit(0)));
      process.once("SIGTERM", stop);
      process.once("SIGINT", stop);
      keep = true;
      return -1;
    }
    if (verb === "limit") {
      const m = /^([A-Za-z0-9._-]{1,80})=(\d{1,5})$/.exec(arg ?? "");
      if (!m) throw new Error(`queue limit takes PROVIDER=N, e.g. anthropic=8 (got "${(arg ?? "").slice(0, 80)}").`);
      const { ProviderSlots } = await import("./core/queue/slots.js");
      await new ProviderSlots(q.redis, q.keys).setLimits({ [m[1]!]: Number(m[2]) });
      out(Number(m[2]) > 0 ? `limit ${m[1]}: at most ${m[2]} running tasks across the fleet` : `limit ${m[1]} removed`);
      return 0;
    }
    throw new Error(`Unknown queue command "${verb.slice(0, 40)}": use ls, show, cancel or limit.`);
  } catch (error) {
    process.stderr.write(`opencode-conductor queue: ${(error as Error).message}\n`);
    return 1;
  } finally {
    if (!keep) await q.close();
  }
}
