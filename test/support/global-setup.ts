// vitest globalSetup of the e2e project. It runs in the main vitest process; workers are its
// child processes, so the registry entries this run owns are those written by us or our children.
// Setup removes what crashed earlier runs left; teardown fails the run on anything a test leaked.
import { orphaned, ownedBy, removeRegistryDirIfEmpty, sweep } from "./registry.js";

export function setup(): void {
  const stale = sweep(orphaned);
  if (stale.length) console.warn(`[e2e global-setup] cleaned up after an earlier run:\n  ${stale.join("\n  ")}`);
}

export function teardown(): void {
  const leaks = sweep(ownedBy(process.pid));
  removeRegistryDirIfEmpty();
  if (leaks.length) {
    // vitest only logs a teardown error ("error during close") and would still exit 0.
    process.exitCode = 1;
    throw new Error(`e2e tests leaked resources (every startOpencode() needs stop() in a finally/afterAll):\n  ${leaks.join("\n  ")}`);
  }
}
