// A HOME for processes the tests and the demo start (our CLI, the MCP Inspector), so that nothing
// they write (the audit trail, instances.json under ~/.local/state/opencode-conductor) lands in
// the real HOME. One per test worker, removed when it exits.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

let home: string | undefined;

export function scratchHome(): string {
  if (!home) {
    const dir = mkdtempSync(join(tmpdir(), "occ-home-"));
    home = dir;
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  }
  return home;
}
