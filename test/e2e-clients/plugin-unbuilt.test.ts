// The Claude Code plugin of a checkout that was never built: `claude plugin install` refuses,
// naming the missing dist/claude-plugin (scripts/claude-plugin.ts writes it at every build), instead
// of reporting success for a server that cannot start. The real client, its own commands; the
// checkout here is what git holds of the plugin (the marketplace and the skill), without dist/.
import { cp, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { clientBin, clientEnv, removeHome, run, tempHome } from "../support/real-clients.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
let home: string;
beforeAll(async () => {
  home = await tempHome();
});
afterAll(async () => {
  if (home) await removeHome(home);
});

it("refuses to install the plugin from an unbuilt checkout, naming what is missing", async () => {
  const claude = await clientBin("claude");
  const checkout = join(home, "checkout");
  await mkdir(checkout);
  for (const path of [".claude-plugin", "skills", "package.json"]) await cp(join(REPO, path), join(checkout, path), { recursive: true });
  const o = { env: clientEnv(home, { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1" }), cwd: checkout, timeoutMs: 120_000 };
  const added = await run(claude, ["plugin", "marketplace", "add", checkout], o);
  expect(added.code, added.stderr + added.stdout).toBe(0);
  const installed = await run(claude, ["plugin", "install", "opencode-conductor@opencode-conductor"], o);
  expect(installed.code).toBe(1);
  expect(installed.stdout + installed.stderr).toContain(`Source path does not exist: ${join(checkout, "dist", "claude-plugin")}`);
});
