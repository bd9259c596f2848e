// vitest globalSetup of the projects that run opencode 2.x (e2e-v2, and browser for console-v2):
// prepares the 2.x binary once, before any worker starts (a cold build takes 15-40 s, longer than
// a hook should wait), and says how long it took. A build that fails does not stop the run: the
// other projects still run and report, and every test that needs 2.x fails with the build's own
// error (opencode2-build.ts reads it back; the e2e-v2 project's setup file fails each of its files).
import { OPENCODE2_BUILD_FAILED, prepareOpencode2 } from "./opencode2-build.js";

export async function setup(): Promise<void> {
  if (process.env[OPENCODE2_BUILD_FAILED]) return; // an earlier project's setup tried this run already
  try {
    const prepared = await prepareOpencode2();
    if (prepared.source !== "cache")
      console.log(`[e2e-v2] opencode 2.x binary ${prepared.source === "env" ? "from OPENCODE2_BIN" : "built"} in ${prepared.ms} ms: ${prepared.binary}`);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // Workers are started after every global setup and inherit this process's environment.
    process.env[OPENCODE2_BUILD_FAILED] = message.slice(0, 4_000);
    console.error(`[e2e-v2] opencode 2.x is not available, so every test that needs it fails (the other projects still run):\n${message}`);
  }
}
