#!/usr/bin/env node
// The `opencode-conductor` command: an MCP server on stdio (default) or Streamable HTTP.
import { parseArgs } from "node:util";
import { endQuietlyOnClosedPipe, keepRunningOnClosedPipe } from "./closed-pipe.js";
import { VERSION } from "./version.js";

const HELP = `opencode-conductor ${VERSION}: hand coding work to opencode agents over MCP.

Usage:
  opencode-conductor                      MCP server on stdio (what MCP clients launch)
  opencode-conductor --http [--port N] [--host 127.0.0.1]
                                          MCP server over Streamable HTTP at http://HOST:PORT/mcp
  opencode-conductor audit [--session ID] [--tool NAME] [--since TIME] [--limit N] [--json]
                                          print the audit trail
  opencode-conductor console [--port N] [--open]
                                          a web console on 127.0.0.1: every task, approvals, timeline, audit (docs/console.md)
  opencode-conductor worker --queue redis://HOST:PORT [--concurrency N] [--workspace DIR] [--root DIR]...
                                          run queued tasks on this machine (docs/scaling.md)
  opencode-conductor queue ls|show|cancel|limit
                                          the fleet's queue at a terminal
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
  OPENCODE_CONDUCTOR_STATE_DIR            state folder (default $XDG_STATE_HOME/opencode-conductor)
  OPENCODE_CONDUCTOR_SANDBOX=srt          run private instances in the srt sandbox
  OPENCODE_CONDUCTOR_AUDIT                audit log path, or off
  OPENCODE_CONDUCTOR_APPROVALS            elicit|return|deny: how agents' permission requests are answered
  OPENCODE_CONDUCTOR_HTTP_TOKEN           bearer token for --http (required off loopback)
  OPENCODE_CONDUCTOR_HTTP_SESSION_TTL_S   idle time before an --http client's session is closed (default 1800)
  OPENCODE_CONDUCTOR_HTTP_ORIGINS         browser origins allowed for --http besides loopback (comma-separated)
  OPENCODE_CONDUCTOR_QUEUE                redis://… : delegations run as jobs on a fleet of workers (docs/scaling.md)
  OPENCODE_CONDUCTOR_QUEUE_TTL_S          how long finished queued tasks stay readable (default 604800)
  OPENCODE_CONDUCTOR_CONSOLE=1            also start the web console (stopped when this server exits)
  OPENCODE_CONDUCTOR_DEBUG=1              print how the opencode server was found or started to stderr`;

async function main(): Promise<number> {
  endQuietlyOnClosedPipe();
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
  if (!args.http && (args.port !== undefined || args.host !== undefined)) {
    process.stderr.write("--port and --host only apply with --http\n");
    return 2;
  }

  // Loaded only now, so --help, --version and flag errors answer without loading the server.
  const [
    { ConfigError, loadConfig },
    { createConnection },
    { assertSomeTools, createServer },
    { startHttp },
    { StdioServerTransport },
    { consoleCommandLine, startConsoleChild },
  ] = await Promise.all([
    import("./config.js"),
    import("./mcp/connection.js"),
    import("./mcp/server.js"),
    import("./mcp/transports/http.js"),
    import("@modelcontextprotocol/sdk/server/stdio.js"),
    import("./console/launch.js"),
  ]);

  let config;
  try {
    config = loadConfig();
    assertSomeTools(config);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`opencode-conductor: ${error.message}\n`);
      return 2;
    }
    throw error;
  }

  keepRunningOnClosedPipe(); // a client gone is seen on stdin; a closed log reader is no reason to stop
  const connection = createConnection(config);
  const newServer = () => createServer({ config, conductor: connection.conductor, connection, secrets: connection.secrets });
  let closeTransport: () => Promise<void>;

  if (args.http) {
    const port = args.port === undefined ? 8765 : Number(args.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      process.stderr.write(`--port must be a port number, got "${args.port}"\n`);
      return 2;
    }
    const http = await startHttp({
      host: args.host ?? "127.0.0.1",
      port,
      token: config.httpToken,
      sessionTtlMs: config.httpSessionTtlS * 1000,
      origins: config.httpOrigins,
      onExpire: (id) => process.stderr.write(`opencode-conductor: closed MCP session ${id} (idle ${config.httpSessionTtlS} s)\n`),
      newServer,
    }).catch((error: Error) => {
      process.stderr.write(`opencode-conductor: ${error.message}\n`);
      return undefined;
    });
    if (!http) return 2;
    process.stderr.write(`opencode-conductor listening on ${http.url}\n`);
    closeTransport = http.close;
  } else {
    const server = newServer();
    await server.connect(new StdioServerTransport());
    closeTransport = () => server.close();
    process.stdin.once("end", () => void shutdown());
    process.stdin.once("close", () => void shutdown());
  }

  // The web console is its own process (one console sees every MCP server); say how to open it, or start it.
  const webConsole = process.env.OPENCODE_CONDUCTOR_CONSOLE === "1" ? startConsoleChild(process.argv[1]!) : undefined;
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
