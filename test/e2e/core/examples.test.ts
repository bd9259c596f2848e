// The runnable library scripts in examples/ against a real opencode 1.18.33 with the scripted
// model, each as a user runs it (`npx tsx examples/<name>.ts <project>`, from the repository root,
// the package resolved by its name). Each test starts its own opencode, so none depends on another;
// each outcome is compared with the session re-read from opencode.
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { connect } from "../../../src/client/index.js";
import { isProcessAlive } from "../../../src/client/discovery/processes.js";
import { InstanceRegistry } from "../../../src/core/instances/registry.js";
import { offlineConfig, offlineEnv, startOpencode, type TestOpencode } from "../../support/opencode.js";
import { httpError, text, toolCall } from "../../support/scripted-model.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const TSX = join(ROOT, "node_modules", "tsx", "dist", "cli.mjs");
const run = promisify(execFile);

let servers: TestOpencode[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  servers = [];
});

async function server(options: Parameters<typeof startOpencode>[0] = {}): Promise<TestOpencode> {
  const oc = await startOpencode(options);
  servers.push(oc);
  return oc;
}

/** Runs an example to its end; its last stdout line is its JSON summary. */
async function example(name: string, oc: TestOpencode, env: Record<string, string> = {}, args: string[] = []) {
  const { stdout, stderr } = await run(process.execPath, [TSX, `examples/${name}.ts`, oc.directory, ...args], {
    cwd: ROOT,
    env: { ...offlineEnv(oc.home), OPENCODE_URL: oc.url, OPENCODE_PASSWORD: oc.password, ...env },
    timeout: 180_000,
  }).catch((error: { stdout?: string; stderr?: string; message: string }) => {
    throw new Error(`examples/${name}.ts failed: ${error.message}\n${error.stdout ?? ""}\n${error.stderr ?? ""}`);
  });
  const lines = stdout.trim().split("\n");
  return { stdout, stderr, summary: JSON.parse(lines.at(-1)!) as Record<string, any> };
}

/** The session's last assistant message as opencode recorded it. */
async function lastReply(oc: TestOpencode, sessionId: string, directory = oc.directory) {
  const messages = await connect({ url: oc.url, password: oc.password, directory }).call("session.messages", { path: { sessionID: sessionId } });
  return messages.findLast((m) => m.info.role === "assistant")!;
}

const textOf = (reply: Awaited<ReturnType<typeof lastReply>>) => reply.parts.findLast((p) => p.type === "text")?.text;

describe("examples/", () => {
  it("delegate.ts: the agent writes a file; done, as opencode recorded it", async () => {
    const oc = await server();
    oc.model.queue(toolCall("write", { filePath: join(oc.directory, "hello.txt"), content: "hello\n" }), text("Wrote hello.txt."));
    const { stdout, summary } = await example("delegate", oc);
    expect(summary).toMatchObject({ status: "done", files: ["hello.txt"] });
    expect(stdout).toContain("done: Wrote hello.txt.");
    expect(readFileSync(join(oc.directory, "hello.txt"), "utf8")).toBe("hello\n");
    const reply = await lastReply(oc, summary.sessionId);
    expect(reply.info.role === "assistant" && reply.info.time.completed).toBeTruthy();
    expect(textOf(reply)).toBe("Wrote hello.txt.");
  });

  it("parallel-budget.ts: three tasks, each done, the batch's spend counted under its cap", async () => {
    const oc = await server();
    const usage = { prompt_tokens: 100, completion_tokens: 10 };
    oc.model.queue(text("Answer one.", { usage }), text("Answer two.", { usage }), text("Answer three.", { usage }));
    const { summary } = await example("parallel-budget", oc, {}, ["100000"]);
    expect(summary.counts).toEqual({ done: 3 });
    expect(summary.budget).toMatchObject({ exceeded: false, maxTokens: 100_000 });
    expect(summary.budget.tokens).toBeGreaterThan(0);
    const answers = await Promise.all((summary.sessions as string[]).map(async (id) => textOf(await lastReply(oc, id))));
    expect(answers.sort()).toEqual(["Answer one.", "Answer three.", "Answer two."]);
  });

  it("fallback.ts: the first model fails with a 400, the backup answers in the same session", async () => {
    const oc = await server();
    oc.model.for("scripted").queue(httpError(400));
    oc.model.for("backup").queue(text("Answered by the backup."));
    const { stdout, summary } = await example("fallback", oc, { OPENCODE_CONDUCTOR_MODEL: "fake/scripted", OPENCODE_CONDUCTOR_FALLBACK: "fake/backup" });
    expect(summary).toMatchObject({ status: "done", model: "fake/backup" });
    expect(summary.fallbacks).toEqual([expect.objectContaining({ from: "fake/scripted", to: "fake/backup" })]);
    expect(stdout).toContain("fell back from fake/scripted to fake/backup");
    const reply = await lastReply(oc, summary.sessionId);
    expect(reply.info.role === "assistant" && reply.info.modelID).toBe("backup");
    expect(textOf(reply)).toBe("Answered by the backup.");
  });

  it("instance.ts: the task runs on a private guarded instance, which is stopped at the end", async () => {
    const oc = await server();
    // The instance is an `opencode serve` in the user's home: its global config names the scripted model.
    const env = offlineEnv(oc.home);
    await mkdir(join(env.XDG_CONFIG_HOME!, "opencode"), { recursive: true });
    await writeFile(join(env.XDG_CONFIG_HOME!, "opencode", "opencode.json"), JSON.stringify(offlineConfig(oc.model.baseURL)));
    const stateDir = join(oc.root, "state");
    oc.model.queue(toolCall("write", { filePath: join(oc.directory, "notes.txt"), content: "a test project\n" }), text("Noted."));
    const { summary } = await example("instance", oc, { OPENCODE_CONDUCTOR_STATE_DIR: stateDir });
    expect(summary).toMatchObject({ status: "done", isolation: "instance", files: ["notes.txt"] });
    expect(existsSync(join(oc.directory, "notes.txt"))).toBe(true);
    // The instance keeps its sessions where any opencode in this home does: re-read it from there.
    expect(textOf(await lastReply(oc, summary.sessionId))).toBe("Noted.");
    // No instance left running.
    const rows = await new InstanceRegistry(stateDir).list();
    expect(rows.filter((r) => isProcessAlive(r.pid))).toEqual([]);
  });
});
