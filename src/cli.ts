#!/usr/bin/env node
// The `opencode-conductor` command: an MCP server on stdio (default) or Streamable HTTP.
import { parseArgs } from "node:util";
import { endQuietlyOnClosedPipe, keepRunningOnClosedPipe } from "./closed-pipe.js";
import { VERSION } from "./version.js";
import { compileWasmWithLiftoffOnly } from "./wasm-tiering.js";
import { capYoungGeneration } from "./young-generation.js";

const HELP = `opencode-conductor ${VERSION}: hand coding work to opencode agents over MCP.

Usage:
  opencode-conductor                      MCP server on stdio (what MCP clients launch)
  opencode-conductor --http [--port N] [--host 127.0.0.1] [--token TOKEN]
                                          MCP server over Streamable HTTP at http://HOST:PORT/mcp
                                          --token: the bearer token clients must send, in place of
                                          OPENCODE_CONDUCTOR_HTTP_TOKEN (\`ps\` shows a command line, not the variable)
  opencode-conductor audit [--session ID] [--tool NAME] [--since TIME] [--limit N] [--before CURSOR] [--json]
                                          print the audit trail
  opencode-conductor console [--port N] [--open]
                                          a web console on 127.0.0.1: every task, approvals, timeline, audit (docs/console.md)
  opencode-conductor worker --queue redis://HOST:PORT [--concurrency N] [--workspace DIR] [--root DIR]...
                                          run queued tasks on this machine (docs/scaling.md)
  opencode-conductor queue ls|show|cancel|limit
                                          the fleet's queue at a terminal
  opencode-conductor run-workflow FILE|NAME [--input KEY=VALUE]... [--directory DIR] [--json]
                                          run a workflow until it ends or waits for a sign-off (docs/workflows.md);
                                          --resume/--retry/--cancel/--status RUN, --answer RUN --approve|--reject
  opencode-conductor install --client claude|codex|gemini|cursor|opencode [--scope user|project] [--dry-run] [--force]
                                          add the MCP server and the delegation skill to a client (uninstall: undo)
  opencode-conductor --help | --version

Environment:
  OPENCODE_URL, OPENCODE_PASSWORD         the opencode server; else the opencode 2.x service's discovery file
                                          ($XDG_STATE_HOME/opencode/service.json), else the one running opencode,
                                          else one is started (\`opencode serve\`; 2.x: \`opencode service start\`)
  OPENCODE_BIN                            the opencode binary to start (default: opencode-ai's, else opencode on PATH)
  OPENCODE_CONDUCTOR_TOOLSETS             delegate,approve,sessions,discover,api (default) or all
  OPENCODE_CONDUCTOR_READ_ONLY=1          only read-only tools; oc_api allows only GET
  OPENCODE_CONDUCTOR_MODEL                default model for new work
  OPENCODE_CONDUCTOR_MODEL_ALLOW/_BLOCK   comma-separated globs of provider/model ids
  OPENCODE_CONDUCTOR_FALLBACK             comma-separated models to switch to when one keeps failing
  OPENCODE_CONDUCTOR_RETRY_TIMEOUT_S      how long a model may retry before the fallback (default 90)
  OPENCODE_CONDUCTOR_DIRECTORY            default project directory
  OPENCODE_CONDUCTOR_INSTANCE_TTL_S       idle time before a private instance stops (default 1800)
  OPENCODE_CONDUCTOR_WORKTREE_TTL_S       how long a finished worktree task's checkout is kept (default 3600)
  OPENCODE_CONDUCTOR_STATE_DIR            state folder (default $XDG_STATE_HOME/opencode-conductor)
  OPENCODE_CONDUCTOR_SANDBOX=srt          run private instances in the srt sandbox
  OPENCODE_CONDUCTOR_AUDIT                audit log path, or off
  OPENCODE_CONDUCTOR_AUDIT_REQUIRED=1     refuse work that changes files while the audit trail cannot be written
  OPENCODE_CONDUCTOR_ROTATE_MB/_KEEP      the audit trail and task records rotate at this size (default 64 MB),
                                          keeping this many older segments (default 10)
  OPENCODE_CONDUCTOR_APPROVALS            elicit|return|deny: how agents' permission requests are answered
  OPENCODE_CONDUCTOR_HTTP_TOKEN           bearer token for --http (required off loopback)
  OPENCODE_CONDUCTOR_HTTP_SESSION_TTL_S   idle time before an --http client's session is closed (default 300)
  OPENCODE_CONDUCTOR_HTTP_MAX_SESSIONS    most --http sessions (2025-11-25 clients) open at once (default 100)
  OPENCODE_CONDUCTOR_HTTP_EVENTS_MB       what one --http session keeps for Last-Event-ID replays (default 4)
  OPENCODE_CONDUCTOR_HTTP_REQUEST_TIMEOUT_S  an --http request's headers and body must arrive within this (default 30)
  OPENCODE_CONDUCTOR_HTTP_ORIGINS         browser origins allowed for --http besides loopback (comma-separated)
  OPENCODE_CONDUCTOR_QUEUE                redis://… : delegations run as jobs on a fleet of workers (docs/scaling.md)
  OPENCODE_CONDUCTOR_QUEUE_TTL_S          how long finished queued tasks stay readable (default 604800)
  OPENCODE_CONDUCTOR_CONSOLE=1            also start the web console (stopped when this server exits)
  OPENCODE_CONDUCTOR_DEBUG=1              print how the opencode server was found or started to stderr`;

/** When the core, the rest of the SDK's schemas and the skill's catalog load if no call has needed them yet: after a client's opening requests. */
const WARM_AFTER_MS = 2_000;

async function main(): Promise<number> {
  endQuietlyOnClosedPipe();
  // Resident memory (docs/performance.md, "bench:scale"): no TurboFan compile of fetch's HTTP parser
  // (before the first fetch), and a young generation of at most 4 MB per semi-space.
  compileWasmWithLiftoffOnly();
  capYoungGeneration();
  if (process.argv[2] === "install" || process.argv[2] === "uninstall") {
    const verb = process.argv[2];
    const [{ ConfigError, loadConfig }, { installCommand }] = await Promise.all([import("./config.js"), import("./install-cli.js")]);
    try {
      return await installCommand(verb, process.argv.slice(3), loadConfig().stateDir);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      process.stderr.write(`opencode-conductor: ${error.message}\n`);
      return 2;
    }
  }
  if (process.argv[2] === "worker" || process.argv[2] === "queue") {
    const sub = process.argv[2];
    const { ConfigError, loadConfig } = await import("./config.js");
    try {
      if (sub === "queue") return await (await import("./queue-cli.js")).queueCommand(process.argv.slice(3));
      return await (await import("./worker-cli.js")).workerCommand(process.argv.slice(3), loadConfig());
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      process.stderr.write(`opencode-conductor: ${error.message}\n`);
      return 2;
    }
  }
  if (process.argv[2] === "console") {
    const [{ ConfigError, loadConfig }, { consoleCommand }] = await Promise.all([import("./config.js"), import("./console/command.js")]);
    try {
      return await consoleCommand(process.argv.slice(3), loadConfig());
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      process.stderr.write(`opencode-conductor: ${error.message}\n`);
      return 2;
    }
  }
  if (process.argv[2] === "run-workflow") {
    const [{ ConfigError, loadConfig }, { runWorkflowCommand }] = await Promise.all([import("./config.js"), import("./workflow-cli.js")]);
    try {
      return await runWorkflowCommand(process.argv.slice(3), loadConfig());
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      process.stderr.write(`opencode-conductor: ${error.message}\n`);
      return 2;
    }
  }
  if (process.argv[2] === "audit") {
    const [{ ConfigError, loadConfig }, { auditCommand }] = await Promise.all([import("./config.js"), import("./audit-cli.js")]);
    try {
      return await auditCommand(process.argv.slice(3), loadConfig().auditPath);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      process.stderr.write(`opencode-conductor: ${error.message}
`);
      return 2;
    }
  }
  let args;
  try {
    args = parseArgs({
      options: {
        http: { type: "boolean" },
        port: { type: "string" },
        host: { type: "string" },
        token: { type: "string" },
        help: { type: "boolean", short: "h" },
        version: { type: "boolean", short: "v" },
      },
      strict: true,
    }).values;
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${HELP}\n`);
    return 2;
  }
  if (args.help) return (void process.stdout.write(`${HELP}\n`), 0);
  if (args.version) return (void process.stdout.write(`${VERSION}\n`), 0);
  if (!args.http && (args.port !== undefined || args.host !== undefined || args.token !== undefined)) {
    process.stderr.write("--port, --host and --token only apply with --http\n");
    return 2;
  }
  // Never echoed: a wrong token is described, not shown.
  if (args.token !== undefined && args.token.trim() === "") {
    process.stderr.write("--token needs a value: the bearer token clients must send (or leave it out and set OPENCODE_CONDUCTOR_HTTP_TOKEN)\n");
    return 2;
  }

  // Loaded only now, so --help, --version and flag errors answer without loading the server.
  const [
    { ConfigError, loadConfig },
    { lazyConnection },
    { assertSomeTools, createServer },
    { consoleCommandLine },
    { recentSessionsOf },
    { lazySkills },
    { preloadSchemas },
  ] = await Promise.all([
    import("./config.js"),
    import("./mcp/lazy-connection.js"),
    import("./mcp/server.js"),
    import("./console/console-command-line.js"),
    import("./mcp/recent-sessions.js"),
    import("./mcp/lazy-skills.js"),
    import("@modelcontextprotocol/server"),
  ]);

  let config;
  try {
    config = loadConfig();
    // --token replaces the variable: it is then one of the secrets every answer and log is scrubbed of.
    if (args.token !== undefined) config = { ...config, httpToken: args.token };
    assertSomeTools(config);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`opencode-conductor: ${error.message}\n`);
      return 2;
    }
    throw error;
  }

  keepRunningOnClosedPipe(); // a client gone is seen on stdin; a closed log reader is no reason to stop
  // The core loads after the server is up (lazy-connection.ts): no list call needs it.
  const connection = lazyConnection(config);
  // The delegation skill over MCP: declared from the first client on, its catalog (the file read and
  // hashed, the SDK's extension) built on the first request that needs it (lazy-skills.ts).
  const skills = lazySkills(
    () => import("./mcp/skills.js").then(({ packageSkills }) => packageSkills((message) => process.stderr.write(`opencode-conductor: skill: ${message}\n`))),
    (error) => process.stderr.write(`opencode-conductor: the delegation skill is not served over MCP: ${error.message}\n`),
  );
  // The SDK builds its wire schemas on first use, of the era a client speaks: a client's opening
  // requests build what they need (as on any SDK server); the rest, both eras' every method, is
  // built once those are answered, with the core and the skill's catalog (docs/performance.md, "Start-up" and "Lists").
  setTimeout(() => {
    preloadSchemas();
    connection.warm();
    skills.warm();
  }, WARM_AFTER_MS).unref();
  const build = () => createServer({ config, conductor: connection.conductor, connection, secrets: connection.secrets, skills });
  // Built before the first client speaks: a process's first server takes ~50 ms (its tools' schemas
  // are compiled then), which would otherwise land on the client's opening request.
  let ready: ReturnType<typeof build> | undefined = build();
  const newServer = () => {
    const server = ready ?? build();
    ready = undefined;
    return server;
  };
  let closeTransport: () => Promise<void>;

  if (args.http) {
    const port = args.port === undefined ? 8765 : Number(args.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      process.stderr.write(`--port must be a port number, got "${args.port}"\n`);
      return 2;
    }
    // Only the transport in use is loaded (the HTTP one brings the Node HTTP adapter): a client spawning us waits for it.
    const { startHttp } = await import("./mcp/transports/http.js");
    const http = await startHttp({
      host: args.host ?? "127.0.0.1",
      port,
      token: config.httpToken,
      sessionTtlMs: config.httpSessionTtlS * 1000,
      maxSessions: config.httpMaxSessions,
      maxEventBytes: config.httpEventsBytes,
      requestTimeoutMs: config.httpRequestTimeoutS * 1000,
      origins: config.httpOrigins,
      onExpire: (id) => process.stderr.write(`opencode-conductor: closed MCP session ${id} (idle ${config.httpSessionTtlS} s)\n`),
      newServer,
    }).catch((error: Error) => {
      process.stderr.write(`opencode-conductor: ${error.message}\n`);
      return undefined;
    });
    if (!http) return 2;
    // 2026-07-28 clients hear of new session transcripts on their subscriptions/listen streams.
    recentSessionsOf(connection.conductor).onChange(() => http.notify.resourcesChanged());
    process.stderr.write(`opencode-conductor listening on ${http.url}\n`);
    closeTransport = http.close;
  } else {
    // Both eras on stdin/stdout: the opening message decides (`initialize`, or a 2026-07-28 request).
    const { serveStdio } = await import("@modelcontextprotocol/server/stdio");
    const stdio = serveStdio(newServer, {
      onerror: (error) => {
        if (config.debug) process.stderr.write(`opencode-conductor: stdio: ${error.message}\n`);
      },
    });
    closeTransport = () => stdio.close();
    process.stdin.once("end", () => void shutdown());
    process.stdin.once("close", () => void shutdown());
  }

  // The web console is its own process (one console sees every MCP server); say how to open it, or start it.
  const webConsole =
    process.env.OPENCODE_CONDUCTOR_CONSOLE === "1"
      ? (await import("./console/console-child.js")).startConsoleChild(process.argv[1]!, {
          ...process.env,
          ...(config.httpToken ? { OPENCODE_CONDUCTOR_HTTP_TOKEN: config.httpToken } : {}),
        })
      : undefined;
  if (webConsole) {
    webConsole.url.then(
      (url) => process.stderr.write(`opencode-conductor: web console at ${url} (pid ${webConsole.pid})\n`),
      (error: Error) => process.stderr.write(`opencode-conductor: the web console did not start: ${error.message}\n`),
    );
  } else process.stderr.write(`opencode-conductor: watch its work in a browser: ${consoleCommandLine()}\n`);

  let closing = false;
  async function shutdown(): Promise<void> {
    if (closing) return;
    closing = true;
    webConsole?.stop();
    await closeTransport().catch(() => undefined);
    await connection.close().catch(() => undefined);
    process.exit(0);
  }
  process.once("SIGTERM", () => void shutdown());
  process.once("SIGINT", () => void shutdown());
  return -1; // keep running
}

main().then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    process.stderr.write(`opencode-conductor: ${(error as Error).message}\n`);
    process.exit(1);
  },
);
