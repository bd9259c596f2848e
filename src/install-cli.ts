// `opencode-conductor install|uninstall`: put the MCP server entry and the delegation skill where a
// client reads them, in one command, and take them out again.
import { homedir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { quoted } from "./core/errors.js";
import { install, InstallError, uninstall } from "./install/install.js";
import { detectLaunch } from "./install/launch-command.js";
import { CLIENTS } from "./install/targets.js";

export const INSTALL_HELP = `Usage: opencode-conductor install --client ${CLIENTS.join("|")} [--scope user|project] [--env KEY=VALUE]… [--dry-run] [--force]
       opencode-conductor uninstall --client NAME [--scope user|project] [--dry-run]
Writes the MCP server entry and the delegation skill for a client (user scope: its files in your
home; project scope: files in the current folder), changing nothing else in them. --dry-run shows
the lines it would write; an entry of the same name already there is refused unless --force. --env
adds a variable to the server's entry (e.g. OPENCODE_URL; the file is then 0600): most clients pass
few of their own variables on to MCP servers. uninstall puts back the files as they were, or takes
our entry out of a file changed since (exit code 1 when something of ours is left, said where).`;

export async function installCommand(verb: "install" | "uninstall", argv: string[], stateDir: string): Promise<number> {
  let values;
  try {
    values = parseArgs({
      args: argv,
      options: {
        client: { type: "string" },
        scope: { type: "string" },
        env: { type: "string", multiple: true },
        "dry-run": { type: "boolean" },
        force: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    }).values;
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${INSTALL_HELP}\n`);
    return 2;
  }
  if (values.help) return (void process.stdout.write(`${INSTALL_HELP}\n`), 0);
  if (!values.client) {
    process.stderr.write(`--client is required.\n\n${INSTALL_HELP}\n`);
    return 2;
  }
  const env: Record<string, string> = {};
  for (const pair of values.env ?? []) {
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(pair);
    if (!match) {
      process.stderr.write(`--env takes KEY=VALUE, got ${quoted(pair, 80)}.\n`);
      return 2;
    }
    env[match[1]!] = match[2]!;
  }
  const home = process.env.HOME || homedir();
  const places = { home, xdgConfig: join(process.env.XDG_CONFIG_HOME || join(home, ".config"), "opencode"), project: process.cwd() };
  const common = { client: values.client, scope: values.scope, dryRun: values["dry-run"], places, stateDir };
  try {
    if (verb === "install") {
      process.stdout.write(`${await install({ ...common, force: values.force, launch: detectLaunch(), env })}\n`);
      return 0;
    }
    const undone = await uninstall(common);
    process.stdout.write(`${undone.report}\n`);
    // Something of ours is still in a file: the report's "left:" lines say where.
    return undone.complete ? 0 : 1;
  } catch (error) {
    if (!(error instanceof InstallError)) throw error;
    process.stderr.write(`opencode-conductor ${verb}: ${error.message}\n`);
    return 2;
  }
}
