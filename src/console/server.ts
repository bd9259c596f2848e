// The console process: an HTTP server on loopback (a free port unless given) that serves the page,
// its live stream and its API, fed by the state dir and by every known opencode server's events.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Config } from "../config.js";
import { AuditLog, readAuditPage } from "../core/governance/audit.js";
import { DEFAULT_ROTATION } from "../core/governance/segments.js";
import { taskRecordsPath } from "../core/governance/task-records.js";
import { ensureStateDir } from "../core/state-dir.js";
import { answer, auditPage, AuditValues, BadRequest, cancelQueued, events, queueView, readBody, stopInstance, taskDetail, type ApiContext } from "./api.js";
import { watchTrails } from "./trails.js";
import { asset, indexPage } from "./assets.js";
import { ConsoleAuth, LOOPBACK } from "./auth.js";
import { ConsoleFleet } from "./fleet.js";
import type { QueueSettings } from "../core/queue/settings.js";
import { Servers } from "./servers.js";
import { followStateFiles } from "./state-files.js";
import { Store } from "./store.js";
import { answerSignOff, RunWalkers, workflowRun, workflowRuns } from "./workflow-runs.js";

export interface ConsoleOptions {
  config: Pick<Config, "stateDir" | "auditPath" | "opencodePassword" | "opencodeUsername" | "httpToken"> & Partial<Pick<Config, "rotation">>;
  /** The fleet's queue (OPENCODE_CONDUCTOR_QUEUE): its tasks, workers and the approvals of worker sessions. */
  queue?: QueueSettings;
  host?: string;
  port?: number;
  /** The URL's token (default: random). Required off loopback. */
  token?: string;
}

export interface RunningConsole {
  /** The URL to open, token included. */
  url: string;
  origin: string;
  close(): Promise<void>;
}

// The page's own scripts and styles only: agent text that slipped into markup could not run.
const HEADERS = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cache-control": "no-store",
};

/** Worktree tasks run on a private instance of their worktree, as instance tasks do. */
const onInstance = (isolation: string | undefined) => isolation === "instance" || isolation === "worktree";

export async function startConsole(o: ConsoleOptions): Promise<RunningConsole> {
  const host = o.host ?? "127.0.0.1";
  if (!LOOPBACK.has(host) && !o.token)
    throw new Error(`--host ${host.slice(0, 100)} is not loopback: give a --token too (anyone who can reach the port could otherwise use the console).`);
  const stateDir = await ensureStateDir(o.config.stateDir);
  const auth = new ConsoleAuth(o.token);
  const store = new Store();
  const servers = new Servers(store, o.config, () => store.emit({ type: "servers" }));
  const secrets = () => [...auth.secrets(), ...servers.secrets(), o.config.httpToken ?? ""].filter((s) => s.length >= 4);
  const scrub = (text: string) => secrets().reduce((out, secret) => out.split(secret).join("[redacted]"), text);
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { ...HEADERS, "content-type": "application/json; charset=utf-8" });
    res.end(scrub(JSON.stringify(body)));
  };
  const audit = new AuditLog(o.config.auditPath, o.config.rotation);
  const trails = watchTrails({ ...o.config, stateDir, rotation: o.config.rotation ?? DEFAULT_ROTATION }, () => store.emit({ type: "health" }));
  const auditValues = new AuditValues();
  const fleet = o.queue ? new ConsoleFleet(o.queue, store, servers) : undefined;
  await fleet?.start();
  const walkers = new RunWalkers(stateDir, (url) => servers.access(url));
  const ctx: ApiContext = { store, servers, fleet, auditPath: o.config.auditPath, stateDir, audit, auditValues, health: trails.view, json, scrub };
  // The filters' first choices: the tools and outcomes of the newest stretch of the trail.
  if (o.config.auditPath)
    void readAuditPage(o.config.auditPath, { limit: 1_000 }).then(
      (page) => auditValues.add(page.entries),
      () => undefined,
    );

  const files = await followStateFiles({
    stateDir,
    tasksPath: taskRecordsPath(stateDir),
    auditPath: o.config.auditPath,
    onRecord: (record) => {
      store.record(record);
      if (record.event !== "start") return;
      // A private instance's session is in the registry before its record is written.
      const url = onInstance(record.isolation) ? servers.instanceUrlOf(record.session_id) : record.server;
      if (url) {
        store.relocate(record.session_id, url);
        servers.follow(url);
      }
    },
    onInstances: (rows) => {
      servers.setInstances(rows);
      for (const task of store.tasks.values()) {
        const url = onInstance(task.isolation) ? servers.instanceUrlOf(task.id) : undefined;
        if (url) store.relocate(task.id, url);
      }
    },
    onWorktrees: (rows) => store.worktrees(rows),
    onAudit: () => store.emit({ type: "audit" }),
  });

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://console");
    if (!auth.hostAllowed(req)) return json(res, 421, { error: "this console answers only to its own host name" });
    if (req.method === "GET" && url.pathname === "/" && url.searchParams.has("token")) {
      if (!auth.tokenMatches(url.searchParams.get("token")))
        return json(res, 403, { error: "wrong token: open the URL printed by `opencode-conductor console`" });
      res.writeHead(303, { ...HEADERS, "set-cookie": auth.setCookie(), location: "/" });
      return res.end();
    }
    if (!auth.hasCookie(req)) {
      res.writeHead(401, { ...HEADERS, "content-type": "text/plain; charset=utf-8" });
      return res.end("Not signed in: open the URL (with its token) that `opencode-conductor console` printed.\n");
    }
    if (req.method === "POST") {
      const allowed = auth.mayChange(req);
      if (!allowed.ok) return json(res, 403, { error: `refused: ${allowed.why}` });
      const body = await readBody(req);
      if (url.pathname === "/api/answer") return answer(ctx, res, body);
      if (url.pathname === "/api/queue/cancel") return cancelQueued(ctx, res, body);
      const signOff = /^\/api\/workflows\/(wfr_[A-Za-z0-9_-]{1,64})\/answer$/.exec(url.pathname);
      if (signOff) return answerSignOff(ctx, walkers, res, signOff[1]!, body);
      const stop = /^\/api\/instances\/(\d+)\/stop$/.exec(url.pathname);
      if (stop) return stopInstance(ctx, res, Number(stop[1]));
      return json(res, 404, { error: "no such action" });
    }
    if (req.method !== "GET") return json(res, 405, { error: "only GET and POST" });
    if (url.pathname === "/" || url.pathname === "/index.html") {
      const page = await indexPage();
      res.writeHead(200, { ...HEADERS, "content-type": page.type });
      return res.end(page.body);
    }
    if (url.pathname === "/api/events") return events(ctx, req, res);
    if (url.pathname === "/api/servers") return json(res, 200, { servers: servers.list() });
    if (url.pathname === "/api/queue") return queueView(ctx, res);
    if (url.pathname === "/api/audit") return auditPage(ctx, res, url.searchParams);
    if (url.pathname === "/api/workflows") return workflowRuns(ctx, res);
    const run = /^\/api\/workflows\/(wfr_[A-Za-z0-9_-]{1,64})$/.exec(url.pathname);
    if (run) return workflowRun(ctx, res, run[1]!);
    const task = /^\/api\/tasks\/(ses_[A-Za-z0-9]+)$/.exec(url.pathname);
    if (task) return taskDetail(ctx, res, task[1]!);
    const file = await asset(url.pathname);
    if (!file) return json(res, 404, { error: "not found" });
    res.writeHead(200, { ...HEADERS, "content-type": file.type });
    res.end(file.body);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: Error) => {
      if (res.headersSent) return void res.end();
      json(res, error instanceof BadRequest ? 400 : 500, { error: error.message.slice(0, 300) });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port ?? 0, host, () => resolve());
  }).catch(async (error: NodeJS.ErrnoException) => {
    trails.close();
    files.close();
    servers.close();
    await fleet?.close();
    throw new Error(error.code === "EADDRINUSE" ? `port ${o.port} is in use: pick another with --port, or leave it out for a free one` : error.message);
  });
  const port = (server.address() as AddressInfo).port;
  auth.bind(host, port);
  const origin = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  return {
    url: `${origin}/?token=${auth.token}`,
    origin,
    async close() {
      trails.close();
      files.close();
      servers.close();
      walkers.close();
      await fleet?.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await audit.close();
    },
  };
}
