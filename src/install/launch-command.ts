// The command an MCP client should run to start this server, from where the package really is:
// an npx cache (npx again), a clone (node + its dist/cli.js), or an installed package (its bin
// when that is on PATH, else node + the installed dist/cli.js).
import { existsSync, realpathSync } from "node:fs";
import { delimiter, join, sep } from "node:path";
import { packageRoot } from "./package-root.js";

export interface Launch {
  command: string;
  args: string[];
  /** How it was chosen, said to the user. */
  how: "npx" | "clone" | "global" | "installed";
}

export function detectLaunch(root = packageRoot(), path = process.env.PATH ?? ""): Launch {
  const cli = join(root, "dist", "cli.js");
  if (root.split(sep).includes("_npx")) return { command: "npx", args: ["-y", "opencode-conductor"], how: "npx" };
  if (existsSync(join(root, ".git"))) return { command: "node", args: [cli], how: "clone" };
  const onPath = path
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, "opencode-conductor"))
    .find((bin) => existsSync(bin) && realpathSync(bin) === realpathSync(cli));
  return onPath ? { command: "opencode-conductor", args: [], how: "global" } : { command: "node", args: [cli], how: "installed" };
}
