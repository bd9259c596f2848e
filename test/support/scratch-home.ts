// A HOME for processes the tests and the demo start (our CLI, the MCP Inspector), so that nothing
// they write (the audit trail, instances.json under ~/.local/state/opencode-conductor, temp files)
// lands in the real HOME or the system temp dir. One per test worker, in the run's scratch folder
// (OCC_SCRATCH_DIR, removed with the run) or the temp dir, and removed when the worker exits.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

let home: string | undefined;

export function scratchHome(): string {
  if (!home) {
    const dir = mkdtempSync(join(process.env.OCC_SCRATCH_DIR || tmpdir(), "occ-home-"));
    mkdirSync(join(dir, "tmp"));
    home = dir;
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  }
  return home;
}

/** The environment of a process started with only a PATH of ours: the scratch HOME and a TMPDIR inside it. */
export function scratchEnv(): { PATH: string; HOME: string; TMPDIR: string } {
  const dir = scratchHome();
  return { PATH: process.env.PATH ?? "", HOME: dir, TMPDIR: join(dir, "tmp") };
}
