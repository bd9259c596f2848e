// A private instance (`isolation: "instance"`) started with an opencode 2.x binary: the guard rails
// reach 2.x in its own config (engine/v2/v2-guard-rails.ts), and a repository that tries to lift them (top-level
// and per-agent rules that allow everything) does not. Read back from the real server: the rules
// it resolved for its agents, and a turn whose `git push` is refused while an allowed command runs.
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectV2, type OpencodeV2Client } from "../../src/client/v2/index.js";
import { InstanceManager } from "../../src/core/instances/manager.js";
import { type Instance } from "../../src/core/instances/types.js";
import { guardRulesV2, GUARDED_AGENTS_V2 } from "../../src/core/engine/v2/v2-guard-rails.js";
import { offlineConfig, offlineEnv } from "../support/opencode.js";
import { prepareOpencode2 } from "../support/opencode2.js";
import { createProjectDir } from "../support/project-dir.js";
import { registerPid, registerRoot, unregisterPid, unregisterRoot } from "../support/registry.js";
import { startScriptedModel, text, toolCall, type ScriptedModel } from "../support/scripted-model.js";
import { isOutcome, recordEvents, type EventLog } from "../support/v2-events.js";

let root: string;
let model: ScriptedModel;
let manager: InstanceManager;
let instance: Instance;
let client: OpencodeV2Client;
let log: EventLog;
let project: string;
let dataDir: string;

interface Rule {
  action: string;
  resource: string;
  effect: string;
}

beforeAll(async () => {
  const { binary } = await prepareOpencode2();
  root = await mkdtemp(join(tmpdir(), "occ-instance-v2-"));
  registerRoot(root);
  model = await startScriptedModel();
  const home = join(root, "home");
  const env = offlineEnv(home);
  dataDir = join(env.XDG_DATA_HOME!, "opencode");
  await mkdir(join(env.XDG_CONFIG_HOME!, "opencode"), { recursive: true });
  await writeFile(join(env.XDG_CONFIG_HOME!, "opencode", "opencode.json"), JSON.stringify(offlineConfig(model.baseURL)));
  project = await createProjectDir(root, "project", { gitInit: true, home });
  // The repository tries to allow everything, at the top and for the build agent.
  await writeFile(
    join(project, "opencode.json"),
    JSON.stringify({
      permission: { bash: "allow", webfetch: "allow", external_directory: "allow" },
      agents: { build: { permissions: [{ action: "*", resource: "*", effect: "allow" }] } },
    }),
  );
  manager = new InstanceManager({
    stateDir: join(root, "state"),
    ttlS: 600,
    binary,
    env: { ...env, GH_TOKEN: "ghp_must_not_reach_the_instance" },
    onSpawn: (i) => registerPid(i.pid, basename(binary), root),
    onExit: (i) => unregisterPid(i.pid),
  });
  instance = await manager.acquire(project);
  client = await connectV2({ url: instance.url, password: instance.password });
  log = await recordEvents(client);
});
afterAll(async () => {
  log?.stop();
  await manager?.stopAll();
  await model?.close();
  await rm(root, { recursive: true, force: true });
  unregisterRoot(root);
});

describe("a private instance on opencode 2.x", () => {
  it("is a 2.x server in the project directory, without the credentials of the environment", async () => {
    expect(instance.major).toBe(2);
    expect(client.identity.major).toBe(2);
    const environ = await readFile(`/proc/${instance.pid}/environ`, "utf8");
    expect(environ).not.toContain("ghp_must_not_reach_the_instance");
    expect(environ).not.toContain("OPENCODE_PERMISSION="); // 2.x would ignore it: the guard is in the config
    expect(manager.attachCommand(instance, "ses_x").command).toBe(`opencode --server ${instance.url} --session ses_x`);
  });

  it("refuses `git push` in a turn while an allowed command runs", async () => {
    const created = (await client.request("session.create", { body: { title: "guarded" } })) as { data: { id: string } };
    const id = created.data.id;
    model.forSession(id).queue(toolCall("shell", { command: "git push origin main" }), toolCall("shell", { command: "echo ran > allowed.txt" }), text("done"));
    const from = log.events.length;
    await client.request("session.prompt", { path: { sessionID: id }, body: { text: "push it" } });
    const outcome = await log.waitFor(isOutcome(id), { after: from, timeoutMs: 90_000 });
    expect(outcome.type).toBe("session.execution.succeeded");
    const messages = (
      (await client.request("session.messages", { path: { sessionID: id }, query: { order: "asc", limit: "200" } })) as {
        data: Array<{
          type: string;
          content?: Array<{ type: string; name?: string; state?: { status: string; input?: { command?: string }; error?: unknown } }>;
        }>;
      }
    ).data;
    const tools = messages.flatMap((m) => m.content ?? []).filter((c) => c.type === "tool");
    const push = tools.find((t) => t.state?.input?.command === "git push origin main");
    const echo = tools.find((t) => t.state?.input?.command === "echo ran > allowed.txt");
    expect(push?.state?.status, JSON.stringify(push)).toBe("error");
    expect(JSON.stringify(push?.state?.error)).toMatch(/denied|rule/i);
    expect(echo?.state?.status, JSON.stringify(echo)).toBe("completed");
    expect(existsSync(join(project, "allowed.txt"))).toBe(true);
    // Nothing was asked: a denial is an answer, not a prompt for a human.
    expect(log.of(id, from).some((e) => e.type === "permission.asked")).toBe(false);
  });

  it("resolves the guard as the last rules of every built-in agent, after the repository's", async () => {
    // A location's agents are loaded with its first prompt (the turn above), then agent.updated.
    await log.waitFor((e) => e.type === "agent.updated", { what: "agent.updated" });
    const agents = ((await client.request("agent.list", {})) as { data: Array<{ id: string; permissions: Rule[] }> }).data;
    const guard = guardRulesV2({ opencodeDataDir: dataDir });
    for (const id of GUARDED_AGENTS_V2) {
      const agent = agents.find((a) => a.id === id);
      expect(agent, `${id} in ${agents.map((a) => a.id).join(", ")}`).toBeDefined();
      expect(agent!.permissions.slice(-guard.length), id).toEqual(guard);
    }
    // The repository's own rules are there too, before the guard.
    const build = agents.find((a) => a.id === "build")!.permissions;
    const lifted = build.findLastIndex((r) => r.action === "*" && r.resource === "*" && r.effect === "allow");
    expect(lifted).toBeGreaterThan(-1);
    expect(lifted).toBeLessThan(build.length - guard.length);
    expect(build).toContainEqual({ action: "shell", resource: "*", effect: "allow" }); // the repository's `permission.bash`, as 2.x converts it
  });
});
