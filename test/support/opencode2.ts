// Starts a real opencode 2.x server for e2e tests, the same way startOpencode() starts 1.x (temp
// HOME/XDG, temp project, offline config pointing at the scripted model, password, free port,
// pid registry): only the binary differs. The binary is built from the vendored source on first use
// (see opencode2-build.ts) or taken from OPENCODE2_BIN.
import { startOpencode, type StartOpencodeOptions, type TestOpencode } from "./opencode.js";
import { prepareOpencode2 } from "./opencode2-build.js";

export { OPENCODE2_SOURCE_VERSION, prepareOpencode2 } from "./opencode2-build.js";

export async function startOpencode2(options: Omit<StartOpencodeOptions, "binary"> = {}): Promise<TestOpencode> {
  const { binary } = await prepareOpencode2();
  return startOpencode({ ...options, binary });
}
