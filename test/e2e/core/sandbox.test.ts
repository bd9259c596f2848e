// Instances under the srt OS sandbox (needs bubblewrap, socat and ripgrep; .ci/run installs them):
// a task writes a file in the directory, a `cat` of a fake ~/.ssh/id_rsa gets nothing (the guard is
// off here, so only the sandbox stands in the way), the settings file goes with the instance, and a
// missing srt refuses to start rather than running unsandboxed.
import { existsSync, readFileSync, statSync } from "node:fs";
import { mkdir, mkdtemp, readdir, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveOpencodeBinary } from "../../../src/client/spawn.js";
import { Conductor } from "../../../src/core/conductor.js";
import { InstanceManager } from "../../../src/core/instances/manager.js";
import { type InstanceManagerOptions } from "../../../src/core/instances/types.js";
import { offlineConfig, offlineEnv } from "../../support/opencode.js";
import { createProjectDir } from "../../support/project-dir.js";
import { registerPid, registerRoot, unregisterPid, unregisterRoot } from "../../support/registry.js";
import { startScriptedModel, text, toolCall, type ScriptedModel } from "../../support/scripted-model.js";

const BINARY_NAME = basename(resolveOpencodeBinary());
const SECRET = "FAKE-PRIVATE-KEY-occ-sandbox-test";
const SLOW = 240_000;
let root: string;
let home: string;
let stateDir: string;
let model: ScriptedModel;
let env: NodeJS.ProcessEnv;
const managers: InstanceManager[] = [];

function manager(extra: Partial<InstanceManagerOptions> = {}): InstanceManager {
  const m = new InstanceManager({
    stateDir,
    ttlS: 600,
    env,
    sandbox: "srt",
    // Guard off: the sandbox alone must stop the read (opencode's own permissions allow it here).
    guard: false,
    configFor: () => offlineConfig(model.baseURL, { permission: { read: "allow", edit: "allow", bash: "allow", external_directory: "allow" } }),
    onSpawn: (i) => registerPid(i.pid, BINARY_NAME, root),
    onExit: (i) => unregisterPid(i.pid),
    ...extra,
  });
  managers.push(m);
  return m;
}

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "occ-sbx-")));
  registerRoot(root);
  home = join(root, "home");
  stateDir = join(root, "state");
  model = await startScriptedModel();
  env = {
    ...offlineEnv(home),
  };
  await mkdir(join(home, ".ssh"), { recursive: true });
  await writeFile(join(home, ".ssh", "id_rsa"), `${SECRET}\n`, { mode: 0o600 });
});

afterAll(async () => {
  await Promise.all(managers.map((m) => m.stopAll()));
  await model?.close();
  await rm(root, { recursive: true, force: true, maxRetries: 3 });
  unregisterRoot(root);
});

/** srt's own prerequisites on Linux; scripts/test-prereqs.sh (run by `npm test`) installs them when it can. */
const MISSING = (["bwrap", "socat", "rg"] as const).filter(
  (cmd) => !(process.env.PATH ?? "").split(delimiter).some((dir) => dir && existsSync(join(dir, cmd))),
);
// CI (.ci/run) sets OCC_REQUIRE_SANDBOX=1: there a missing tool fails the test instead of skipping it.
const CANNOT_RUN = MISSING.length > 0 && process.env.OCC_REQUIRE_SANDBOX !== "1";
const NOT_RUN = CANNOT_RUN ? ` [NOT RUN: ${MISSING.join(", ")} missing; sudo apt-get install -y bubblewrap socat ripgrep]` : "";
if (CANNOT_RUN)
  process.stderr.write(
    `\n*** The srt sandbox e2e test cannot run here: ${MISSING.join(", ")} not on PATH. Install with: sudo apt-get install -y bubblewrap socat ripgrep ***\n\n`,
  );

describe("srt sandbox (e2e)", () => {
  it.skipIf(CANNOT_RUN)(
    `runs a task that writes in the directory; reading ~/.ssh/id_rsa gets nothing; cleanup on stop${NOT_RUN}`,
    async () => {
      expect(MISSING, "srt needs bubblewrap (bwrap), socat and ripgrep (rg) on PATH").toEqual([]);
      const m = manager();
      const project = await createProjectDir(root, "project", { home, gitInit: true });
      const instance = await m.acquire(project);
      expect((await m.list())[0]).toMatchObject({ pid: instance.pid, sandbox: "srt" });
      const settingsFiles = (await readdir(join(stateDir, "sandbox"))).filter((f) => f.endsWith(".json"));
      expect(settingsFiles).toHaveLength(1);
      const settingsFile = join(stateDir, "sandbox", settingsFiles[0]!);
      expect(statSync(settingsFile).mode & 0o777).toBe(0o600);

      const conductor = new Conductor({ url: instance.url, password: instance.password, directory: project });
      try {
        const file = join(project, "out.txt");
        model.queue(toolCall("write", { filePath: file, content: "from the sandbox\n" }), text("Wrote out.txt."));
        const wrote = await conductor.delegate({ task: "write out.txt" });
        expect(wrote).toMatchObject({ status: "done", answer: "Wrote out.txt." });
        expect(readFileSync(file, "utf8")).toBe("from the sandbox\n");

        const key = join(home, ".ssh", "id_rsa");
        const before = model.requests.length;
        model.queue(toolCall("bash", { command: `cat ${key}`, description: "read the key" }), text("Tried."));
        const read = await conductor.delegate({ task: "read the key" });
        expect(read).toMatchObject({ status: "done", answer: "Tried." });
        // What the tool gave back reaches the model in the next request: an error, never the key.
        const toolResults = model.requests
          .slice(before)
          .flatMap((r) => (r.body as { messages?: { role: string; content?: unknown }[] }).messages ?? [])
          .filter((x) => x.role === "tool")
          .map((x) => JSON.stringify(x.content));
        expect(toolResults.join("\n")).toMatch(/id_rsa: No such file or directory/);
        expect(toolResults.join("\n")).not.toContain(SECRET);
      } finally {
        conductor.close();
      }

      await m.stop(project);
      expect(existsSync(settingsFile)).toBe(false);
    },
    SLOW,
  );

  it("a missing srt refuses to start the instance (never unsandboxed)", async () => {
    const m = manager({ srtBinary: join(root, "no-such-srt") });
    const project = await createProjectDir(root, "missing", { home });
    await expect(m.acquire(project)).rejects.toThrow(/srt.*not an executable srt.*not started/);
    expect(await m.list()).toEqual([]);
  });
});
