// Private opencode instances for a test opencode's project: offline (its HOME and scripted model),
// state beside it, and every instance in the harness's pid registry, so a forgotten one fails the run.
import { basename, join } from "node:path";
import { InstanceManager } from "../../src/core/instances/manager.js";
import { offlineConfig, offlineEnv, type TestOpencode } from "./opencode.js";
import { registerPid, unregisterPid } from "./registry.js";

export function testInstances(oc: TestOpencode, binary: string): InstanceManager {
  return new InstanceManager({
    stateDir: join(oc.root, "state"),
    ttlS: 600,
    env: offlineEnv(oc.home),
    configFor: () => offlineConfig(oc.model.baseURL),
    binary,
    onSpawn: (i) => registerPid(i.pid, basename(binary), oc.root),
    onExit: (i) => unregisterPid(i.pid),
  });
}
