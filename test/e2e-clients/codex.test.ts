// Codex 0.171.0 (npm, pinned) drives our server the way docs/clients.md says: the config.toml entry
// (stdio, and HTTP with a bearer token from the environment), `codex mcp list`, then `codex exec`
// in which its model calls oc_status and oc_delegate against a real opencode whose agent writes a
// file. Offline: Codex's model is the scripted OpenAI Responses API of test/support/llm-api.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openaiResponses } from "../support/llm-api/openai-responses.js";
import { expectDelegated, expectReturnedApproval, startApprovalScene, startScene, TOKEN, type Scene } from "../support/client-scene.js";
import { startOpencode, type TestOpencode } from "../support/opencode.js";
import { clientBin, clientEnv, docSnippet, initializedVersion, localize, run, shellWords, tapped } from "../support/real-clients.js";

let oc: TestOpencode;
let codex: string;

beforeAll(async () => {
  [oc, codex] = await Promise.all([startOpencode(), clientBin("codex")]);
});
afterAll(async () => {
  await oc?.stop();
});

function env(scene: Scene): Record<string, string> {
  return clientEnv(scene.home, { SCRIPTED_API_KEY: "scripted-key", OPENCODE_CONDUCTOR_HTTP_TOKEN: TOKEN });
}

/** The test's model provider, then the docs' server entry made local (through the wiretap with `tap`). */
async function writeConfig(scene: Scene, heading: string, tap?: string): Promise<void> {
  const provider = [
    'model = "scripted"',
    'model_provider = "scripted"',
    "",
    "[model_providers.scripted]",
    'name = "Scripted"',
    `base_url = "${scene.api.url}/v1"`,
    'wire_api = "responses"',
    'env_key = "SCRIPTED_API_KEY"',
    "",
  ].join("\n");
  await mkdir(join(scene.home, ".codex"), { recursive: true });
  await writeFile(
    join(scene.home, ".codex", "config.toml"),
    `${provider}\n${localize(docSnippet(heading, "toml"), { ...scene.values, ...(tap ? { tap } : {}) }, "toml")}`,
  );
}

async function codexLine(scene: Scene, line: string, extra: string[] = []) {
  const [, sub, ...args] = shellWords(line);
  return run(codex, [sub!, ...extra, ...args], { env: env(scene), cwd: scene.oc.directory, timeoutMs: 180_000 });
}

describe.each(["stdio", "http"] as const)("Codex over %s", (transport) => {
  let scene: Scene;
  beforeAll(async () => {
    scene = await startScene(oc, openaiResponses, transport, `codex-${transport}`);
  });
  afterAll(async () => {
    await scene?.close();
  });

  it("config.toml from docs/clients.md, codex mcp list shows it enabled, codex exec delegates and a real file is written", async () => {
    const tap = transport === "stdio" ? join(scene.home, "mcp-traffic.jsonl") : undefined;
    await writeConfig(scene, transport === "stdio" ? "Codex over stdio" : "Codex over HTTP", tap);
    const list = await codexLine(scene, docSnippet("Codex over stdio").trim());
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/opencode\s.*enabled/);
    expect(list.stdout).toContain(transport === "stdio" ? "dist/cli.js" : scene.http!.url);

    // The test project is not a git repository: Codex wants --skip-git-repo-check there.
    const headless = await codexLine(scene, docSnippet("Codex headless (`codex exec`)").trim(), ["--skip-git-repo-check"]);
    await expectDelegated(scene, headless);
    // Codex opens with initialize (the 2025 era the same server serves unchanged), asking for 2025-06-18.
    if (tap) expect(initializedVersion(tapped(tap))).toBe("2025-06-18");
  });
});

describe("codex exec and an approval (nobody there to answer it)", () => {
  let approval: Awaited<ReturnType<typeof startApprovalScene>>;
  let scene: Scene;
  beforeAll(async () => {
    approval = await startApprovalScene(openaiResponses, "codex-approval");
    scene = approval.scene;
  });
  afterAll(async () => {
    await approval?.close();
  });

  it("Codex declines the elicitation form at once; that is not a rejection: the call comes back BLOCKED with the oc_answer call, audited by client", async () => {
    await writeConfig(scene, "Codex over stdio");
    const headless = await codexLine(scene, docSnippet("Codex headless (`codex exec`)").trim(), ["--skip-git-repo-check"]);
    await expectReturnedApproval(scene, headless, "decline");
  });
});
