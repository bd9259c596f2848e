// Where this package is on disk (works from src/ under tsx and from the bundled dist/).
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, "utf8")) as { name?: string }).name === "opencode-conductor") return dir;
    dir = dirname(dir);
  }
  throw new Error("cannot find the opencode-conductor package folder");
}
