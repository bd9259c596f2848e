// Gemini CLI 0.61.0 (npm, pinned) drives our server the way docs/clients.md says: `gemini mcp add
// --trust` (stdio, and HTTP with a bearer token), `gemini mcp list`, then `gemini -p` in which its
// model calls oc_status (with the `wait_for_previous` Gemini CLI adds to every tool) and oc_delegate
// against a real opencode whose agent writes a file. Offline: Gemini CLI's model is the scripted
// Gemini API of test/support/llm-api, reached through GOOGLE_GEMINI_BASE_URL.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { geminiGenerate } from "../support/llm-api/gemini.js";
import { expectDelegated, startScene, type Scene } from "../support/client-scene.js";
import { startOpencode, type TestOpencode } from "../support/opencode.js";
import { clientBin, clientEnv, docSnippet, initializedVersion, localize, run, shellWords, tapped } from "../support/real-clients.js";

let oc: TestOpencode;
let gemini: string;

beforeAll(async () => {
  [oc, gemini] = await Promise.all([startOpencode(), clientBin("gemini")]);
});
afterAll(async () => {
  await oc?.stop();
});

function env(scene: Scene): Record<string, string> {
  return clientEnv(scene.home, { GOOGLE_GEMINI_BASE_URL: scene.api.url, GEMINI_API_KEY: "scripted-key", GEMINI_CLI_TRUST_WORKSPACE: "true" });
}

async function runSnippet(scene: Scene, heading: string, tap?: string) {
  const results = [];
  for (const line of localize(docSnippet(heading), { ...scene.values, ...(tap ? { tap } : {}) })
    .split("\n")
    .filter((l) => l.startsWith("gemini "))) {
    const [, ...args] = shellWords(line);
    results.push(await run(gemini, args, { env: env(scene), cwd: scene.oc.directory, timeoutMs: 180_000 }));
  }
  return results;
}

describe.each(["stdio", "http"] as const)("Gemini CLI over %s", (transport) => {
  let scene: Scene;
  beforeAll(async () => {
    // Gemini's system prompt tells its model to set wait_for_previous; so does this one.
    scene = await startScene(oc, geminiGenerate, transport, `gemini-${transport}`, (plan) => ({
      ...plan,
      calls: plan.calls.map((c, i) => (i === 0 ? { ...c, args: { ...c.args, wait_for_previous: true } } : c)),
    }));
    await mkdir(join(scene.home, ".gemini"), { recursive: true });
    await writeFile(
      join(scene.home, ".gemini", "settings.json"),
      JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" } }, telemetry: { enabled: false }, privacy: { usageStatisticsEnabled: false } }),
    );
  });
  afterAll(async () => {
    await scene?.close();
  });

  it("mcp add from docs/clients.md, mcp list says Connected, gemini -p delegates and a real file is written", async () => {
    const tap = transport === "stdio" ? join(scene.home, "mcp-traffic.jsonl") : undefined;
    const [add, list] = await runSnippet(scene, transport === "stdio" ? "Gemini CLI over stdio" : "Gemini CLI over HTTP", tap);
    expect(add!.code, add!.stderr).toBe(0);
    expect(list!.code, list!.stderr).toBe(0);
    expect(list!.stdout + list!.stderr).toMatch(/✓ opencode: .*Connected/); // Gemini CLI prints the list on stderr

    const [headless] = await runSnippet(scene, "Gemini CLI headless (`gemini -p`)");
    await expectDelegated(scene, headless!);
    // Gemini CLI offered oc_status with its own wait_for_previous, and the call that set it worked.
    const offered = scene.api.requests.find((r) => r.step?.kind === "tool")!;
    const declarations = (
      offered.body.tools as Array<{ functionDeclarations?: Array<{ name: string; parametersJsonSchema?: unknown; parameters?: unknown }> }>
    ).flatMap((t) => t.functionDeclarations ?? []);
    const status = declarations.find((d) => d.name.endsWith("oc_status"))!;
    expect(JSON.stringify(status.parametersJsonSchema ?? status.parameters)).toContain("wait_for_previous");
    // Gemini CLI opens with initialize (the 2025 era the same server serves unchanged), asking for 2025-06-18.
    if (tap) expect(initializedVersion(tapped(tap))).toBe("2025-06-18");
  });
});
