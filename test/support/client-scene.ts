// One real-client scenario (test/e2e-clients): a real opencode whose scripted model writes a file
// when asked, a scripted LLM API for the client's own model that calls oc_status then oc_delegate,
// a temp HOME, and for HTTP our server on a free port with a bearer token. expectDelegated() checks
// the outcome against what opencode recorded, not only against what the client printed.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { connect } from "../../src/client/connect.js";
import { FASTEST_HUMAN_MS } from "../../src/mcp/elicit.js";
import { startHttpCli, type HttpCli } from "./http-cli.js";
import type { ApiModule, LlmApi } from "./llm-api/server.js";
import { startLlmApi } from "./llm-api/server.js";
import type { ClientPlan } from "./llm-api/script.js";
import { startOpencode, type TestOpencode } from "./opencode.js";
import { delegatePlan, removeHome, tempHome, type Localize, type RunResult } from "./real-clients.js";
import { text, toolCall } from "./scripted-model.js";
import { readMessages } from "./turns.js";

export const TOKEN = "client-test-token-0123456789abcdef";

export interface Scene {
  oc: TestOpencode;
  api: LlmApi;
  plan: ClientPlan;
  home: string;
  /** The file the delegated agent is asked to write, and what it must contain. */
  file: string;
  content: string;
  http?: HttpCli;
  /** Values for localize(): the test's opencode, state dir and (HTTP) endpoint and token. */
  values: Localize;
  close(): Promise<void>;
}

export async function startScene(
  oc: TestOpencode,
  api: ApiModule,
  transport: "stdio" | "http",
  name: string,
  tweak: (plan: ClientPlan) => ClientPlan = (p) => p,
): Promise<Scene> {
  const file = join(oc.directory, `${name}.txt`);
  const content = `written for ${name}`;
  oc.model.queue(toolCall("write", { filePath: file, content }), text(`Wrote ${name}.txt.`));
  const plan = tweak(delegatePlan(file, content));
  const llm = await startLlmApi(api, plan);
  const home = await tempHome();
  const stateDir = join(home, ".local/state/opencode-conductor");
  const http =
    transport === "http"
      ? await startHttpCli(["--port", "0"], {
          HOME: home,
          OPENCODE_URL: oc.url,
          OPENCODE_PASSWORD: oc.password,
          OPENCODE_CONDUCTOR_DIRECTORY: oc.directory,
          OPENCODE_CONDUCTOR_STATE_DIR: stateDir,
          OPENCODE_CONDUCTOR_HTTP_TOKEN: TOKEN,
        })
      : undefined;
  return {
    oc,
    api: llm,
    plan,
    home,
    file,
    content,
    http,
    values: { opencodeUrl: oc.url, password: oc.password, directory: oc.directory, stateDir, ...(http ? { mcpUrl: http.url, token: TOKEN } : {}) },
    async close() {
      if (http) {
        http.child.kill("SIGTERM");
        await http.exit;
      }
      await llm.close();
      await removeHome(home);
    },
  };
}

/** The client ran our tools in plan order, the agent wrote the file, opencode's session says so, and the client's model got the result. */
export async function expectDelegated(scene: Scene, result: RunResult): Promise<void> {
  const diag = `exit ${result.code} after ${result.ms} ms\nstdout:\n${result.stdout.slice(-3000)}\nstderr:\n${result.stderr.slice(-3000)}`;
  expect(result.code, diag).toBe(0);
  // ToolSearch: Claude Code's default tool search loads our tools first (llm-api/anthropic.ts).
  const called = scene.api.requests.flatMap((r) => (r.step?.kind === "tool" && r.step.name !== "ToolSearch" ? [r.step.name] : []));
  expect(
    called.map((n) => n.replace(/^.*?(oc_\w+)$/, "$1")),
    diag,
  ).toEqual(["oc_status", "oc_delegate"]);
  expect(existsSync(scene.file), diag).toBe(true);
  expect(readFileSync(scene.file, "utf8")).toBe(scene.content);

  // What the client's model was shown after oc_delegate: the real turn's result.
  const last = scene.api.requests.findLast((r) => (r.conversation?.toolResults.length ?? 0) >= 2)!;
  expect(last, diag).toBeDefined();
  const [status, delegated] = last.conversation!.toolResults;
  expect(status).toMatch(/opencode/i);
  // Claude Code shows the model the structured result, the others the text.
  expect(delegated).toMatch(/DONE|"status":"done"/);
  const sessionId = /ses_[A-Za-z0-9]+/.exec(delegated!)?.[0];
  expect(sessionId, delegated).toBeDefined();

  // Re-read from opencode: that session's write tool completed on the file.
  const client = connect({ url: scene.oc.url, password: scene.oc.password, directory: scene.oc.directory });
  const parts = (await readMessages(client, sessionId!)).flatMap((m) => m.parts);
  const write = parts.find((p) => p.type === "tool" && p.tool === "write");
  expect(write?.type === "tool" && write.state.status, JSON.stringify(parts).slice(0, 2000)).toBe("completed");
  expect(write?.type === "tool" && (write.state as { input?: { filePath?: string } }).input?.filePath).toBe(scene.file);
  expect(result.stdout).toContain(scene.plan.finalText);
}

/** A scene whose opencode asks before bash, and whose agent runs one bash command that writes the file. */
export async function startApprovalScene(api: ApiModule, name: string): Promise<{ asking: TestOpencode; scene: Scene; close(): Promise<void> }> {
  const asking = await startOpencode({ permission: { bash: "ask" } });
  const scene = await startScene(asking, api, "stdio", name);
  asking.model.clear();
  asking.model.queue(toolCall("bash", { command: `echo approved > ${scene.file}`, description: "write the file" }), text("Wrote it after approval."));
  return {
    asking,
    scene,
    async close() {
      await scene.close();
      await asking.stop();
    },
  };
}

/**
 * The client answered the approval form on its own (`action`, faster than a person could): the
 * delegation came back BLOCKED with the oc_answer call, the audit says `by: "client"`, and opencode
 * still has the request pending with nothing run.
 */
export async function expectReturnedApproval(scene: Scene, result: RunResult, action: "cancel" | "decline"): Promise<void> {
  expect(result.code, result.stderr.slice(-3000)).toBe(0);
  const delegated = scene.api.requests.findLast((r) => (r.conversation?.toolResults.length ?? 0) >= 2)!.conversation!.toolResults[1]!;
  expect(delegated).toMatch(/BLOCKED|"status":"blocked"/);
  expect(delegated).toContain("oc_answer");
  const audit = readFileSync(join(scene.values.stateDir, "audit.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { decision?: string; detail?: { action?: string; elapsed_ms?: number; request_id?: string } });
  const returned = audit.find((e) => e.decision === "returned");
  expect(returned, JSON.stringify(audit)).toMatchObject({ tool: "oc_delegate", by: "client", outcome: "returned", detail: { action } });
  expect(returned!.detail!.elapsed_ms).toBeLessThan(FASTEST_HUMAN_MS);
  const oc = connect({ url: scene.oc.url, password: scene.oc.password, directory: scene.oc.directory });
  expect((await oc.call("permission.list")).map((p) => p.id)).toContain(returned!.detail!.request_id);
  expect(existsSync(scene.file)).toBe(false);
}
