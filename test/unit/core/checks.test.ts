// Gates without opencode: the check runner (exit codes, trimmed output, timeouts, no secrets in its
// environment) and the gate loop's rounds with a fake fix turn.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { failureMessage, runCheck } from "../../../src/core/governance/checks.js";
import { gate } from "../../../src/core/governance/gate.js";
import { guardedEnv } from "../../../src/core/policy/guard-rails.js";
import type { TurnSummary } from "../../../src/core/turns/summary.js";

const dir = mkdtempSync(join(tmpdir(), "occ-checks-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("runCheck", () => {
  it("passes on exit 0 (no output kept) and fails with the exit code and trimmed output", async () => {
    expect(await runCheck("echo fine", dir, 1)).toEqual({ round: 1, command: "echo fine", passed: true, exit: 0 });
    expect(await runCheck("echo '  out  '; echo err >&2; exit 4", dir, 2)).toEqual({
      round: 2,
      command: "echo '  out  '; echo err >&2; exit 4",
      passed: false,
      exit: 4,
      output: "out  \nerr",
    });
  });

  it("runs in the given directory", async () => {
    expect((await runCheck("pwd; exit 1", dir, 1)).output).toBe(dir);
  });

  it("keeps only the end of a long output", async () => {
    const r = await runCheck("seq 1 20000; exit 1", dir, 1);
    expect(r.output!.length).toBeLessThanOrEqual(4_001);
    expect(r.output!.endsWith("20000")).toBe(true);
    expect(r.output!.startsWith("…")).toBe(true);
  });

  it("kills a check (and what it started) at its timeout", async () => {
    const started = Date.now();
    const r = await runCheck("sleep 30 & sleep 30", dir, 1, 300);
    expect(r).toMatchObject({ passed: false, exit: null, timedOut: true });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(failureMessage([r], 300)).toBe("The check `sleep 30 & sleep 30` timed out after 0.3 s:\n(no output)\nFix it.");
  });

  it("does not pass the conductor's secrets to the command", async () => {
    process.env.OPENCODE_PASSWORD = "s3cret-pw";
    try {
      const r = await runCheck('echo "[$OPENCODE_PASSWORD]"; exit 1', dir, 1);
      expect(r.output).toBe("[]");
    } finally {
      delete process.env.OPENCODE_PASSWORD;
    }
  });
});

describe("gate", () => {
  const turn = (answer: string, tokens = 10): TurnSummary => ({
    sessionId: "ses_x",
    status: "done",
    answer,
    tokens: { input: tokens, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0, total: tokens },
    cost: 0.01,
    files: [{ path: answer }],
    tools: [],
  });

  it("sends the failure back and is done when a later round passes, adding up the rounds", async () => {
    const messages: string[] = [];
    const flag = join(dir, "flag");
    const r = await gate(turn("first"), { checks: [`test -f ${flag} || { echo missing; exit 2; }`], cwd: dir }, async (message) => {
      messages.push(message);
      writeFileSync(flag, "");
      return turn("second");
    });
    expect(r.status).toBe("done");
    expect(r.answer).toBe("second");
    expect(r.checks.map((c) => [c.round, c.passed])).toEqual([
      [1, false],
      [2, true],
    ]);
    expect(messages).toEqual([`The check \`test -f ${flag} || { echo missing; exit 2; }\` failed (exit 2):\nmissing\nFix it.`]);
    expect(r.tokens?.total).toBe(20);
    expect(r.cost).toBeCloseTo(0.02);
    expect(r.files?.map((f) => f.path)).toEqual(["first", "second"]);
  });

  it("ends checks_failed after maxRounds check runs", async () => {
    let fixes = 0;
    const r = await gate(turn("a"), { checks: ["exit 1"], maxRounds: 3, cwd: dir }, async () => (fixes++, turn("again")));
    expect(r.status).toBe("checks_failed");
    expect(fixes).toBe(2);
    expect(r.checks).toHaveLength(3);
  });

  it("runs no checks on a turn that did not end done, and stops when told to", async () => {
    const blocked = await gate({ ...turn("x"), status: "blocked" }, { checks: ["exit 1"], cwd: dir }, async () => turn("never"));
    expect(blocked).toMatchObject({ status: "blocked", checks: [] });
    const stopped = await gate(turn("x"), { checks: ["exit 1"], cwd: dir, stop: () => true }, async () => turn("never"));
    expect(stopped.status).toBe("checks_failed");
    expect(stopped.checks).toHaveLength(1);
  });
});

describe("checks of unattended work", () => {
  it("run with the guard rails' environment: no tokens, no git credentials", async () => {
    const env = guardedEnv({ ...process.env, GH_TOKEN: "ghp_secret_token", GITHUB_TOKEN: "gh_other" });
    const run = await runCheck('echo "gh=${GH_TOKEN:-none} github=${GITHUB_TOKEN:-none} prompt=$GIT_TERMINAL_PROMPT"; exit 1', process.cwd(), 1, 10_000, env);
    expect(run.passed).toBe(false);
    expect(run.output).toContain("gh=none github=none prompt=0");
  });
});
