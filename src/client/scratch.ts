// A temp folder of its own for each opencode process we start, removed when it ends. opencode is a
// Bun executable that unpacks native libraries into TMPDIR (4-14 MB a start, and for some releases
// at every `--version`) and never removes them. Started with an environment without TMPDIR (an MCP
// client that passes its servers only HOME, PATH and a few more), they pile up in /tmp; in a folder
// of ours they go when the process does.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Scratch {
  /** The folder; the child's TMPDIR. */
  dir: string;
  /** `env` with TMPDIR and BUN_TMPDIR set to the folder. */
  env: NodeJS.ProcessEnv;
  /** Removes the folder and what the child left in it; never throws. */
  remove(): void;
}

/**
 * A new folder inside the TMPDIR `env` names (else this process's temp dir). When neither can hold
 * one (a TMPDIR that does not exist), the child gets `env` as it is: its temp files are then where
 * they would have been without us.
 */
export function scratchFor(env: NodeJS.ProcessEnv): Scratch {
  const dir = makeDir(env.TMPDIR) ?? makeDir(tmpdir());
  if (!dir) return { dir: env.TMPDIR || tmpdir(), env, remove: () => undefined };
  return {
    dir,
    // Older Bun runtimes (opencode 1.1.11 here) read BUN_TMPDIR and write to /tmp whatever TMPDIR says.
    env: { ...env, TMPDIR: dir, BUN_TMPDIR: dir },
    remove: () => {
      try {
        rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
      } catch {
        // best effort: a folder in the temp dir that could not go is no reason to fail a stop
      }
    },
  };
}

function makeDir(parent: string | undefined): string | undefined {
  if (!parent) return undefined;
  try {
    return mkdtempSync(join(parent, "occ-opencode-"));
  } catch {
    return undefined;
  }
}
