// Guard rails on a real guarded instance (InstanceManager: guard config + credential-free env) with
// the scripted model trying what unattended work must not do: git push (also inside a chain), gh,
// npm publish, a web fetch and a write outside the project. Each attempt is refused, nothing asks,
// and the turn still finishes with the model's last answer. Checked with the guard session rules,
// and without them (the instance's config alone), also against a repository config that tries to
// allow them back.
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveOpencodeBinary } from "../../../src/client/spawn.js";
import { Conductor } from "../../../src/core/conductor.js";
import { InstanceManager } from "../../../src/core/instances/manager.js";
import { type Instance, type InstanceManagerOptions } from "../../../src/core/instances/types.js";
import { offlineConfig, offlineEnv } from "../../support/opencode.js";
import { createProjectDir } from "../../support/project-dir.js";
import { registerPid, registerRoot, unregisterPid, unregisterRoot } from "../../support/registry.js";
import { startScriptedModel, text, toolCall, type ScriptedModel } from "../../support/scripted-model.js";

let root: string;
let model: ScriptedModel;
let manager: InstanceManager;

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "occ-guard-")));
  registerRoot(root);
  await mkdir(join(root, "home"), { recursive: true });
  model = await startScriptedModel();
  manager = new InstanceManager(managerOptions());
});

function managerOptions(): InstanceManagerOptions {
  const home = join(root, "home");
  return {
    stateDir: join(root, "state"),
    ttlS: 600,
    env: {
      ...offlineEnv(home),
    },
    configFor: () => offlineConfig(model.baseURL),
    onSpawn: (i) => registerPid(i.pid, basename(resolveOpencodeBinary()), root),
    onExit: (i) => unregisterPid(i.pid),
  };
}

afterAll(async () => {
  await manager?.stopAll();
  await model?.close();
  await rm(root, { recursive: true, force: true, maxRetries: 3 });
  unregisterRoot(root);
});

interface ToolOutcome {
  tool: string;
  status: string;
  error?: string;
  input: Record<string, unknown>;
}

/** Runs one turn in which the model tries every forbidden thing, then answers. */
async function attempt(instance: Instance, options: { guardRules: boolean; title: string; manager?: InstanceManager }) {
  const outside = join(root, `outside-${options.title}.txt`);
  const conductor = new Conductor({ url: instance.url, password: instance.password, directory: instance.directory });
  try {
    const session = await conductor.client.call("session.create", {
      body: { title: options.title, ...(options.guardRules ? { permission: (options.manager ?? manager).sessionRules() } : {}) },
    });
    model
      .forSession(session.id)
      .queue(
        toolCall("bash", { command: "git push origin main", description: "push" }),
        toolCall("bash", { command: "echo ok && git push --force", description: "chained push" }),
        toolCall("bash", { command: "gh pr create --fill", description: "open a PR" }),
        toolCall("bash", { command: "npm publish", description: "publish" }),
        toolCall("webfetch", { url: "http://127.0.0.1:9/x", format: "text" }),
        toolCall("write", { filePath: outside, content: "escaped\n" }),
        text("Finished despite the denials."),
      );
    const r = await conductor.delegate({ sessionId: session.id, task: "try everything" });
    const messages = await conductor.client.call("session.messages", { path: { sessionID: session.id } });
    const tools: ToolOutcome[] = messages.flatMap((m) =>
      m.parts.flatMap((p) =>
        p.type === "tool"
          ? [{ tool: p.tool, status: p.state.status, input: p.state.input, ...("error" in p.state ? { error: String(p.state.error) } : {}) }]
          : [],
      ),
    );
    // Tool names offered to the model in the turn's first request.
    const body = model.requestsFor(session.id).find((q) => q.kind === "chat")?.body;
    const offered = (body?.tools ?? []).map((t) => (t as { function?: { name?: string } }).function?.name);
    return { r, tools, outside, offered, leftovers: model.leftovers() };
  } finally {
    conductor.close();
  }
}

// Each test starts servers and runs 7-step turns: generous ceilings for a loaded 2-core machine.
const SLOW = 240_000;

const DENIED = /rule which prevents you from using this specific tool call/;

function expectAllRefused(result: Awaited<ReturnType<typeof attempt>>) {
  const { r, tools, outside, offered } = result;
  // Nothing asked (that would be "blocked"), and the model got its last turn.
  expect(r).toMatchObject({ status: "done", answer: "Finished despite the denials." });
  expect(tools.map((t) => t.tool)).toEqual(["bash", "bash", "bash", "bash", "invalid", "write"]);
  for (const t of [...tools.slice(0, 4), tools[5]!]) {
    expect(t.status, JSON.stringify(t)).toBe("error");
    expect(t.error, JSON.stringify(t)).toMatch(DENIED);
  }
  // A tool denied outright is not offered at all: opencode answers the call as unavailable.
  expect(tools[4]!.input).toMatchObject({ tool: "webfetch", error: expect.stringContaining("Model tried to call unavailable tool 'webfetch'") });
  expect(offered).not.toEqual(expect.arrayContaining(["webfetch"]));
  for (const name of ["webfetch", "websearch", "question"]) expect(offered).not.toContain(name);
  expect(offered).toEqual(expect.arrayContaining(["bash", "write", "edit", "read"]));
  expect(existsSync(outside)).toBe(false);
  expect(result.leftovers).toEqual({});
}

describe("guard rails on a private instance (e2e)", () => {
  let instance: Instance;

  beforeAll(async () => {
    const project = await createProjectDir(root, "project", { gitInit: true, home: join(root, "home") });
    instance = await manager.acquire(project);
  }, SLOW);

  it(
    "with the guard session rules: every forbidden attempt is denied and the task finishes",
    async () => {
      expectAllRefused(await attempt(instance, { guardRules: true, title: "guarded" }));
    },
    SLOW,
  );

  it(
    "without session rules, the instance's own config still denies them",
    async () => {
      expectAllRefused(await attempt(instance, { guardRules: false, title: "config-only" }));
    },
    SLOW,
  );

  it(
    "a repository config that allows them again does not win",
    async () => {
      // Written after start: opencode reads project config when a directory instance boots, so use a fresh directory.
      const repo = await createProjectDir(root, "repo", { gitInit: true, home: join(root, "home") });
      await writeFile(
        join(repo, "opencode.json"),
        JSON.stringify({ permission: { bash: { "*": "allow", "git push *": "allow", "gh *": "allow" }, webfetch: "allow", external_directory: "allow" } }),
      );
      const other = await manager.acquire(repo);
      expectAllRefused(await attempt(other, { guardRules: false, title: "repo-allows" }));
      expectAllRefused(await attempt(other, { guardRules: true, title: "repo-allows-guarded" }));

      // Control: the same repository on an unguarded instance really allows them.
      const unguarded = new InstanceManager({ ...managerOptions(), stateDir: join(root, "state-unguarded"), guard: false });
      try {
        const loose = await attempt(await unguarded.acquire(repo), { guardRules: false, title: "control", manager: unguarded });
        expect(loose.r.status).toBe("done");
        expect(loose.tools.slice(0, 4).map((t) => t.status)).toEqual(["completed", "completed", "completed", "completed"]);
        expect(loose.offered).toContain("webfetch");
        expect(existsSync(loose.outside)).toBe(true);
      } finally {
        await unguarded.stopAll();
      }
    },
    2 * SLOW,
  );
});
