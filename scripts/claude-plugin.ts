// Writes the Claude Code plugin of this checkout into dist/claude-plugin/ after every build (tsup's
// onSuccess): the plugin manifest, whose MCP server is this checkout's built dist/cli.js (by its
// absolute path: Claude Code copies a plugin into its own cache, so a path inside the plugin would
// point at a copy without the dependencies), and the delegation skill. .claude-plugin/marketplace.json
// names dist/claude-plugin as the plugin's source, so from a checkout that was never built
// `claude plugin install` refuses ("Source path does not exist: …/dist/claude-plugin") instead of
// installing a server that cannot start. Kept out of the npm package (its path is this machine's).
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

export function writeClaudePlugin(root = ROOT): string {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string; license: string };
  const dir = join(root, "dist", "claude-plugin");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, ".claude-plugin"), { recursive: true });
  cpSync(join(root, "skills", "opencode-delegate"), join(dir, "skills", "opencode-delegate"), { recursive: true });
  const manifest = {
    $schema: "https://anthropic.com/claude-code/plugin.schema.json",
    name: "opencode-conductor",
    version: pkg.version,
    description:
      "Hand coding work to opencode agents: the opencode-conductor MCP server (delegate, run in parallel, wait, answer approvals) and a skill that teaches when and how to delegate.",
    author: { name: "opencode-conductor" },
    license: pkg.license,
    skills: ["./skills/opencode-delegate"],
    mcpServers: { opencode: { command: "node", args: [join(root, "dist", "cli.js")] } },
  };
  writeFileSync(join(dir, ".claude-plugin", "plugin.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  return dir;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(`wrote ${writeClaudePlugin()}`);
