// One-command installs, proven with the clients' own commands: the Claude Code plugin from this
// clone (`claude plugin marketplace add` + `claude plugin install`), the Gemini CLI extension
// (`gemini extensions link`), and `opencode-conductor install --client codex`. For each, the client's
// own health check says Connected, and a headless run shows from the recorded model requests that
// (a) our tools were offered and called against a real opencode that wrote a real file, and (b) the
// delegation skill reached the client's model.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skillBody, skillDescription } from "../../src/install/skill.js";
import { CLI } from "../support/mcp-client.js";
import { anthropicMessages } from "../support/llm-api/anthropic.js";
import { geminiGenerate } from "../support/llm-api/gemini.js";
import { openaiResponses } from "../support/llm-api/openai-responses.js";
import { expectDelegated, startScene, type Scene } from "../support/client-scene.js";
import { startOpencode, type TestOpencode } from "../support/opencode.js";
import { clientBin, clientEnv, run } from "../support/real-clients.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const TASK = "Use oc_delegate to write the file";

let oc: TestOpencode;
beforeAll(async () => {
  oc = await startOpencode();
});
afterAll(async () => {
  await oc?.stop();
});

/** What our server needs to reach the test's opencode, in the environment the client passes on. */
const serverEnv = (scene: Scene) => ({
  OPENCODE_URL: oc.url,
  OPENCODE_PASSWORD: oc.password,
  OPENCODE_CONDUCTOR_DIRECTORY: oc.directory,
  OPENCODE_CONDUCTOR_STATE_DIR: scene.values.stateDir,
});

/** Every request body the client sent its model, as one string. */
const sent = (scene: Scene) => scene.api.requests.map((r) => JSON.stringify(r.body)).join("\n");

describe("Claude Code plugin from this clone", () => {
  let scene: Scene;
  let claude: string;
  beforeAll(async () => {
    claude = await clientBin("claude");
    scene = await startScene(oc, anthropicMessages, "stdio", "claude-plugin");
  });
  afterAll(async () => {
    await scene?.close();
  });

  it("installs with claude's own plugin commands; mcp list Connected; claude -p gets our tools and the skill", async () => {
    const env = clientEnv(scene.home, {
      ANTHROPIC_BASE_URL: scene.api.url,
      ANTHROPIC_API_KEY: "sk-ant-scripted",
      ...serverEnv(scene),
    });
    const o = { env, cwd: oc.directory, timeoutMs: 120_000 };
    const added = await run(claude, ["plugin", "marketplace", "add", REPO], o);
    expect(added.code, added.stderr + added.stdout).toBe(0);
    const installed = await run(claude, ["plugin", "install", "opencode-conductor@opencode-conductor"], o);
    expect(installed.code, installed.stderr + installed.stdout).toBe(0);
    const list = await run(claude, ["mcp", "list"], o);
    expect(list.stdout).toMatch(/plugin:opencode-conductor:opencode: .*✔ Connected/);

    const headless = await run(claude, ["-p", TASK, "--allowedTools", "mcp__plugin_opencode-conductor_opencode"], o);
    await expectDelegated(scene, headless);
    // Claude Code lists skills by their description: the skill reached the model.
    expect(sent(scene)).toContain(JSON.stringify(skillDescription()).slice(1, 120));
  });
});

describe("Gemini CLI extension from this clone", () => {
  let scene: Scene;
  let gemini: string;
  beforeAll(async () => {
    gemini = await clientBin("gemini");
    scene = await startScene(oc, geminiGenerate, "stdio", "gemini-extension");
    await mkdir(join(scene.home, ".gemini"), { recursive: true });
    await writeFile(
      join(scene.home, ".gemini", "settings.json"),
      JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" } }, telemetry: { enabled: false }, privacy: { usageStatisticsEnabled: false } }),
    );
  });
  afterAll(async () => {
    await scene?.close();
  });

  it("links with gemini's own extensions command; mcp list Connected; gemini -p gets our tools and the skill", async () => {
    const env = clientEnv(scene.home, {
      GOOGLE_GEMINI_BASE_URL: scene.api.url,
      GEMINI_API_KEY: "scripted-key",
      GEMINI_CLI_TRUST_WORKSPACE: "true",
      ...serverEnv(scene),
    });
    const o = { env, cwd: oc.directory, timeoutMs: 180_000 };
    const linked = await run(gemini, ["extensions", "link", REPO, "--consent"], o);
    expect(linked.code, linked.stderr + linked.stdout).toBe(0);
    const list = await run(gemini, ["mcp", "list"], o);
    expect(list.stdout + list.stderr).toMatch(/✓ opencode \(from opencode-conductor\): .*Connected/);

    // Gemini CLI does not take `trust` from an extension: headless, its tools are offered only in yolo mode.
    const headless = await run(gemini, ["-p", TASK, "--approval-mode", "yolo"], o);
    await expectDelegated(scene, headless);
    // Gemini CLI finds the skill in the extension and lists it to its model by description.
    expect(sent(scene)).toContain(JSON.stringify(skillDescription()).slice(1, 120));
  });
});

describe("opencode-conductor install --client codex", () => {
  let scene: Scene;
  let codex: string;
  beforeAll(async () => {
    codex = await clientBin("codex");
    scene = await startScene(oc, openaiResponses, "stdio", "codex-install");
  });
  afterAll(async () => {
    await scene?.close();
  });

  it("writes config.toml and AGENTS.md; codex mcp list sees it; codex exec gets our tools and the skill", async () => {
    // A user's existing config: the scripted Responses API as Codex's model provider (as in codex.test.ts).
    await mkdir(join(scene.home, ".codex"), { recursive: true });
    const provider = `model = "scripted"\nmodel_provider = "scripted"\n\n[model_providers.scripted]\nname = "Scripted"\nbase_url = "${scene.api.url}/v1"\nwire_api = "responses"\nenv_key = "SCRIPTED_API_KEY"\n`;
    await writeFile(join(scene.home, ".codex", "config.toml"), provider);
    const env = clientEnv(scene.home, { SCRIPTED_API_KEY: "scripted-key", ...serverEnv(scene) });
    // Codex passes none of its own variables to MCP servers: the entry carries them (--env).
    const installed = await run(
      process.execPath,
      [CLI, "install", "--client", "codex", ...Object.entries(serverEnv(scene)).flatMap(([k, v]) => ["--env", `${k}=${v}`])],
      { env, cwd: oc.directory },
    );
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toContain(`node ${join(REPO, "dist", "cli.js")} (clone)`);
    const list = await run(codex, ["mcp", "list"], { env, cwd: oc.directory });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/opencode/);

    const headless = await run(codex, ["exec", "--skip-git-repo-check", TASK], { env, cwd: oc.directory, timeoutMs: 180_000 });
    await expectDelegated(scene, headless);
    // Codex sends ~/.codex/AGENTS.md to its model: the skill's text is in what it sent.
    expect(sent(scene)).toContain(
      JSON.stringify(
        skillBody()
          .split("\n")
          .find((l) => l.startsWith("You can hand work"))!,
      ).slice(1, -1),
    );

    // uninstall gives the user's config back, byte for byte.
    const removed = await run(process.execPath, [CLI, "uninstall", "--client", "codex"], { env, cwd: oc.directory });
    expect(removed.code, removed.stderr).toBe(0);
    const { readFile } = await import("node:fs/promises");
    expect(await readFile(join(scene.home, ".codex", "config.toml"), "utf8")).toBe(provider);
  });
});
