// `opencode-conductor run-workflow` as CI or cron runs it (the built CLI, no terminal, no MCP client)
// against the real opencode 1.x and the scripted model: its exit codes and what it prints. A
// sign-off stops a headless run with exit 3 and the command that answers it, never an automatic
// yes (the run record holds no sign-off until `--answer` gives one); a failing check exits 1 saying
// why; a bad file or a missing input exits 2 naming the field before anything runs. The agent
// step's recorded turn is compared with the session as opencode recorded it.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { connect } from "../../../src/client/connect.js";
import { CLI } from "../../support/mcp-client.js";
import { startOpencode, type TestOpencode } from "../../support/opencode.js";
import { registerPid, unregisterPid } from "../../support/registry.js";
import { scratchEnv } from "../../support/scratch-home.js";
import { text } from "../../support/scripted-model.js";
import { lastAnswer, readMessages } from "../../support/turns.js";

let server: TestOpencode;
let stateDir: string;

beforeAll(async () => {
  server = await startOpencode({ gitInit: true });
  stateDir = join(server.root, "state");
  const dir = join(server.directory, ".opencode", "workflows");
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, "ship.yaml"),
    `name: ship
inputs:
  change: {}
  test: { default: "true" }
steps:
  - name: implement
    kind: agent
    prompt: "Make this change: {{inputs.change}}"
  - name: tests
    kind: check
    run: "{{inputs.test}}"
  - name: sign-off
    kind: approval
    message: "Ship {{inputs.change}}? The agent said: {{steps.implement.output}}"
`,
  );
  await writeFile(join(server.root, "broken.yaml"), "name: broken\nsteps:\n  - name: a\n    kind: agent\n    prompt: hi\n  - name: b\n    kind: signoff\n");
});
beforeEach(() => server.model.clear());
afterAll(() => server?.stop());

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The built CLI as a cron job runs it: stdin closed, output captured, the user's settings in its environment. */
async function runWorkflow(...args: string[]): Promise<Exit> {
  const child = spawn(process.execPath, [CLI, "run-workflow", ...args], {
    env: {
      ...scratchEnv(),
      OPENCODE_URL: server.url,
      OPENCODE_PASSWORD: server.password,
      OPENCODE_CONDUCTOR_DIRECTORY: server.directory,
      OPENCODE_CONDUCTOR_STATE_DIR: stateDir,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  registerPid(child.pid!, "dist/cli.js");
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
  const [code] = (await once(child, "exit")) as [number | null];
  unregisterPid(child.pid!);
  return { code, stdout, stderr };
}

const runIdOf = (out: Exit) => /^run (wfr_\S+):/m.exec(out.stderr)?.[1] ?? /^(wfr_\S+) /m.exec(out.stdout)?.[1];

describe("run-workflow (the built CLI, headless)", () => {
  it("stops at the sign-off with exit 3 and says how to answer it; nothing signs off by itself; --answer --approve ends it with exit 0", async () => {
    server.model.for("scripted").queue(text("Changed the greeting."));
    const first = await runWorkflow("ship", "--input", "change=the greeting");
    expect(first.code, first.stderr).toBe(3);
    const id = runIdOf(first)!;
    expect(id).toMatch(/^wfr_/);
    expect(first.stdout).toContain("BLOCKED: sign-off needed: Ship the greeting? The agent said: Changed the greeting.");
    expect(first.stdout).toContain(`opencode-conductor run-workflow --answer ${id} --approve   (or --reject)`);

    // Read again later, as the next cron tick would: still blocked, with no sign-off recorded.
    const status = await runWorkflow("--status", id, "--json");
    expect(status.code, status.stderr).toBe(3);
    const blocked = JSON.parse(status.stdout) as {
      status: string;
      steps: Array<{
        name: string;
        status: string;
        attempts: Array<{ signOff?: unknown; turns?: Array<{ sessionId: string; status: string; answer: string }> }>;
      }>;
    };
    expect(blocked.status).toBe("blocked");
    expect(blocked.steps.map((s) => [s.name, s.status])).toEqual([
      ["implement", "done"],
      ["tests", "done"],
      ["sign-off", "blocked"],
    ]);
    expect(blocked.steps[2]!.attempts[0]!.signOff).toBeUndefined();
    const turn = blocked.steps[0]!.attempts[0]!.turns![0]!;
    const messages = await readMessages(connect({ url: server.url, password: server.password, directory: server.directory }), turn.sessionId);
    const last = [...messages].reverse().find((m) => m.info.role === "assistant")!;
    expect("completed" in last.info.time && last.info.time.completed).toBeTruthy();
    expect(turn).toMatchObject({ status: "done", answer: lastAnswer(messages) });

    // A resume does not sign off either.
    const resumed = await runWorkflow("--resume", id);
    expect(resumed.code).toBe(3);
    expect(resumed.stdout).toContain("BLOCKED: sign-off needed:");

    const answered = await runWorkflow("--answer", id, "--approve", "--comment", "looks right", "--json");
    expect(answered.code, answered.stderr).toBe(0);
    const done = JSON.parse(answered.stdout) as { status: string; steps: Array<{ attempts: Array<{ signOff?: Record<string, unknown> }> }> };
    expect(done.status).toBe("done");
    expect(done.steps[2]!.attempts[0]!.signOff).toMatchObject({ decision: "approve", by: "human (cli)", comment: "looks right" });
    // The model was asked once, for the agent step.
    expect(server.model.requests.filter((r) => r.kind === "chat")).toHaveLength(1);
  });

  it("a rejected sign-off ends the run failed: exit 1", async () => {
    server.model.for("scripted").queue(text("Done."));
    const first = await runWorkflow("ship", "--input", "change=the footer");
    expect(first.code, first.stderr).toBe(3);
    const rejected = await runWorkflow("--answer", runIdOf(first)!, "--reject", "--comment", "not now");
    expect(rejected.code).toBe(1);
    expect(rejected.stdout).toContain("failed");
    expect(rejected.stdout).toContain("rejected by human (cli): not now");
  });

  it("a failing check ends the run failed with exit 1, saying which command failed", async () => {
    server.model.for("scripted").queue(text("Done."));
    const out = await runWorkflow("ship", "--input", "change=the header", "--input", "test=exit 4");
    expect(out.code, out.stderr).toBe(1);
    expect(out.stdout).toMatch(/tests\s+check\s+failed/);
    // The failed command and its exit, under its step, and the run's end.
    expect(out.stdout, out.stdout).toContain("    exit 4: exit 4");
    expect(out.stdout).toMatch(/\nfailed: /);
    expect(out.stdout).not.toContain("BLOCKED");
  });

  it("exit 2 before anything runs: a missing input, an unknown step kind (its line and field), an unknown option", async () => {
    const chats = server.model.requests.filter((r) => r.kind === "chat").length;
    const missing = await runWorkflow("ship");
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("change");
    const broken = await runWorkflow(join(server.root, "broken.yaml"));
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain('broken.yaml:7: steps[1].kind: unknown step kind "signoff"');
    const option = await runWorkflow("ship", "--yes");
    expect(option.code).toBe(2);
    expect(option.stderr).toContain("Usage: opencode-conductor run-workflow");
    const answer = await runWorkflow("--answer", "wfr_nosuchrun", "--approve");
    expect(answer.code).toBe(2);
    expect(answer.stderr).toContain('No workflow run "wfr_nosuchrun"');
    expect(server.model.requests.filter((r) => r.kind === "chat")).toHaveLength(chats);
  });
});
