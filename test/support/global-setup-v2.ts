// vitest globalSetup of the e2e-v2 project: prepares the opencode 2.x binary once, before any
// worker starts (a cold build takes 15-40 s, longer than a hook should wait), and says how long it took.
import { prepareOpencode2 } from "./opencode2-build.js";

export async function setup(): Promise<void> {
  const prepared = await prepareOpencode2();
  if (prepared.source !== "cache")
    console.log(`[e2e-v2] opencode 2.x binary ${prepared.source === "env" ? "from OPENCODE2_BIN" : "built"} in ${prepared.ms} ms: ${prepared.binary}`);
}
