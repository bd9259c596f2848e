// Other opencode releases for the tests: `opencode-linux-x64@V` from the npm registry, installed
// once into the tool cache (outside the project and HOME). The package ships the binary itself.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { npmInstalled } from "./tool-cache.js";

const VERSION = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/;

/** Path of the `opencode` binary of release `version`, installing it on first use. */
export async function opencodeRelease(version: string): Promise<string> {
  if (!VERSION.test(version)) throw new Error(`"${version.slice(0, 80)}" is not an opencode version (expected e.g. 1.18.20)`);
  const prefix = await npmInstalled(`opencode-linux-x64@${version}`);
  const binary = join(prefix, "node_modules", "opencode-linux-x64", "bin", "opencode");
  if (!existsSync(binary)) throw new Error(`opencode-linux-x64@${version} installed, but ${binary} is missing`);
  return binary;
}
