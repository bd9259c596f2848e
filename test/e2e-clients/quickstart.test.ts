// docs/quickstart.md, followed as written: every line of each numbered step's shell block runs
// through sh in a temp HOME, in order, with the real Claude Code. The precondition of the page
// ("opencode with a model provider that works") is the pinned opencode on PATH with a config in
// that HOME whose provider is the scripted model; Claude Code's own model is a scripted Anthropic
// API. The page's checkout is a copy of this one's tracked files (sharing its installed
// node_modules: the page's `npm install` is what the copy already has), so `npm pack` builds in the
// copy, never under the tests that use this checkout's dist/. The packed tarball is installed
// globally into the temp HOME's npm prefix: it must ship types, its `install --client claude` must
// connect, and `claude -p` must delegate to an opencode the conductor starts itself.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { copyFile, mkdir, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { anthropicMessages } from "../support/llm-api/anthropic.js";
import { startLlmApi, type LlmApi } from "../support/llm-api/server.js";
import { offlineConfig } from "../support/opencode.js";
import { clientBin, clientEnv, delegatePlan, removeHome, run, tempHome, type RunResult } from "../support/real-clients.js";
import { startScriptedModel, text, toolCall, type ScriptedModel } from "../support/scripted-model.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const PAGE = join(REPO, "docs", "quickstart.md");

/** The shell lines of step `n` ("## n. …"), comments dropped. */
function stepLines(n: number): string[] {
  const page = readFileSync(PAGE, "utf8");
  const section = page.split(/^## /m).find((s) => s.startsWith(`${n}. `));
  if (!section) throw new Error(`docs/quickstart.md has no step ${n}`);
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error(`docs/quickstart.md step ${n} has no sh block`);
  return block
    .split("\n")
    .map((l) => l.replace(/\s+#.*$/, "").trim())
    .filter(Boolean);
}

let home: string;
let model: ScriptedModel;
let api: LlmApi;
let checkout: string;
let project: string;
let env: Record<string, string>;
const file = () => join(project, "hello.txt");

/**
 * npm asked a question in that HOME: under `npm test` our environment carries npm_config_cache
 * (the real ~/.npm), where npm would write its debug log; this one writes into the HOME.
 */
function npmEnv(home: string): NodeJS.ProcessEnv {
  return { ...process.env, HOME: home, npm_config_cache: join(home, ".npm") };
}

beforeAll(async () => {
  home = await tempHome();
  model = await startScriptedModel();
  // "opencode with a model provider that works": the user's opencode config, its provider the scripted model.
  await mkdir(join(home, ".config", "opencode"), { recursive: true });
  await writeFile(join(home, ".config", "opencode", "opencode.json"), JSON.stringify(offlineConfig(model.baseURL)));
  project = join(home, "project");
  await mkdir(project);
  checkout = join(home, "opencode-conductor");
  for (const path of execFileSync("git", ["ls-files"], { cwd: REPO, encoding: "utf8" }).split("\n").filter(Boolean)) {
    await mkdir(dirname(join(checkout, path)), { recursive: true });
    await copyFile(join(REPO, path), join(checkout, path));
  }
  await symlink(join(REPO, "node_modules"), join(checkout, "node_modules"));
  const claude = await clientBin("claude");
  api = await startLlmApi(anthropicMessages, delegatePlan(file(), "hi"));
  const prefix = join(home, "npm-global");
  env = clientEnv(home, {
    // The user's PATH: their global npm prefix, opencode (the pinned one), Claude Code.
    PATH: [join(prefix, "bin"), join(REPO, "node_modules", ".bin"), dirname(claude), process.env.PATH ?? ""].join(":"),
    // The user's global npm prefix is this HOME's; their npm settings (the global config, where
    // this machine keeps its certificate authority, and their own ~/.npmrc) still apply.
    npm_config_prefix: prefix,
    npm_config_globalconfig: execFileSync("npm", ["config", "get", "globalconfig"], { encoding: "utf8", env: npmEnv(home) }).trim(),
    ...(process.env.npm_config_userconfig ? { npm_config_userconfig: process.env.npm_config_userconfig } : {}),
    npm_config_update_notifier: "false",
    ANTHROPIC_BASE_URL: api.url,
    ANTHROPIC_API_KEY: "sk-ant-scripted",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    OPENCODE_DISABLE_MODELS_FETCH: "1",
  });
});
afterAll(async () => {
  await api?.close();
  await model?.close();
  if (home) await removeHome(home);
});

/** Runs a step's lines in order in `cwd` (a `cd` line moves it, as in a terminal); each must exit 0. */
async function step(n: number, cwd: string, skip: (line: string) => string | undefined = () => undefined): Promise<RunResult[]> {
  const results: RunResult[] = [];
  for (const line of stepLines(n)) {
    if (skip(line)) continue;
    const cd = /^cd (\S+)$/.exec(line);
    if (cd) {
      cwd = cd[1] === "opencode-conductor" ? checkout : join(cwd, cd[1]!);
      continue;
    }
    const r = await run("sh", ["-c", line], { env, cwd, timeoutMs: 600_000 });
    expect(r.code, `step ${n}: ${line}\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`).toBe(0);
    results.push(r);
  }
  return results;
}

it("takes a user with opencode to Claude Code delegating to it, step by step as written", { timeout: 1_500_000 }, async () => {
  // 1. opencode answers.
  model.queue(text("Hi from your provider."));
  const [said] = await step(1, home);
  expect(said!.stdout).toContain("Hi from your provider.");

  // 2. Build, pack and install globally (the copy already has its dependencies installed).
  const [, , version] = await step(2, home, (line) => (line === "npm install" ? "the copy shares this checkout's installed node_modules" : undefined));
  const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string };
  expect(version!.stdout.trim()).toContain(pkg.version);
  const installed = join(home, "npm-global", "lib", "node_modules", "opencode-conductor");
  expect(existsSync(join(installed, "dist", "index.d.ts")), "the packed package ships its types").toBe(true);
  expect(existsSync(join(installed, "dist", "fleet.d.ts"))).toBe(true);
  expect(existsSync(join(installed, "dist", "claude-plugin")), "the checkout's own Claude plugin stays out of the package").toBe(false);

  // 3. install --client claude, from the global install: its own bin.
  const [preview] = await step(3, project);
  const written = JSON.parse(readFileSync(join(home, ".claude.json"), "utf8")) as { mcpServers: Record<string, { command: string }> };
  expect(written.mcpServers.opencode!.command).toBe("opencode-conductor");
  // The dry run showed the lines the install then wrote (a new ~/.claude.json: every line added).
  expect(preview!.stdout).toMatch(/create .*\.claude\.json/);
  const section = preview!.stdout.split(/--- .*\.claude\.json\n/)[1]!.split("\n\n--- ")[0]!;
  const added = section
    .split("\n")
    .filter((l) => l.startsWith("+ ") || l === "+")
    .map((l) => l.slice(2));
  expect(`${added.join("\n")}\n`).toBe(readFileSync(join(home, ".claude.json"), "utf8"));

  // 4. Connected.
  const [listed] = await step(4, project);
  expect(listed!.stdout).toMatch(/opencode: .*✔ Connected/);

  // 5. Delegate: the conductor starts opencode itself (no URL given), whose agent writes the file.
  model.queue(toolCall("write", { filePath: file(), content: "hi" }), text("Wrote hello.txt."));
  const [delegated] = await step(5, project);
  const results = api.requests.findLast((r) => (r.conversation?.toolResults.length ?? 0) >= 2)?.conversation?.toolResults ?? [];
  const diag = `claude -p:\n${delegated!.stdout.slice(-2000)}\n${delegated!.stderr.slice(-2000)}\ntool results: ${JSON.stringify(results).slice(0, 3000)}\nlast request: ${JSON.stringify(api.requests.at(-1)?.body.messages).slice(-2500)}\nmodel requests: ${JSON.stringify(api.requests.map((r) => ({ path: r.path, step: r.step, tools: ((r.body.tools as Array<{ name: string }> | undefined) ?? []).map((t) => t.name) }))).slice(0, 3000)}`;
  expect(existsSync(file()), diag).toBe(true);
  expect(readFileSync(file(), "utf8")).toBe("hi");
  expect(results[1]).toMatch(/DONE|"status":"done"/);
  expect(results[1]).toMatch(/ses_[A-Za-z0-9]+/);
  // 6. oc_status named the console command of this installation, as the page says.
  expect(results[0]).toContain("opencode-conductor console --open");
  expect(delegated!.stdout).toContain("The opencode agent wrote");
});
