// oc_workflow: its schema (in the workflows toolset, outside the default tools/list), the project's
// workflows listed with a refused one's error (and, without a project directory, the runs with
// what the files need), and malformed workflows, missing inputs and unknown
// runs refused before anything reaches opencode. Runs against the real opencode are in
// test/e2e/mcp/workflows.test.ts and test/e2e/core/workflows.test.ts.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectCleanError, useNoOpencode } from "../../support/tool-replay.js";
import { listedTools } from "../../../src/mcp/listing/listed-tools.js";
import { expectToolsnap, listedTool } from "../../support/toolsnaps.js";
import { clientHints } from "../../../src/mcp/listing/compact-listing.js";
import { connect } from "../../../src/client/index.js";
import { REPLAY_URL } from "../../support/fake-opencode.js";

const TOOL = "oc_workflow";
let project: string;
beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), "occ-wf-unit-"));
});
afterAll(() => rmSync(project, { recursive: true, force: true }));

const GOOD = "name: one step\ninputs:\n  bug: {}\nsteps:\n  - name: fix\n    kind: agent\n    prompt: 'Fix {{inputs.bug}}'\n";

describe(`${TOOL} schema`, () => {
  it("matches its snapshot", async () => expectToolsnap(await listedTool(TOOL)));

  it("is in the workflows toolset: not in the default tools/list", async () => {
    expect((await listedTools({})).map((t) => t.name)).not.toContain(TOOL);
    expect((await listedTools({ OPENCODE_CONDUCTOR_TOOLSETS: "workflows" })).map((t) => t.name)).toEqual([TOOL]);
    const tool = await listedTool(TOOL);
    expect(tool.inputSchema.required).toEqual(["action"]);
    expect(clientHints(tool.annotations)).toMatchObject({ readOnlyHint: false, destructiveHint: true });
  });
});

describe(`${TOOL} refusals and listing (nothing reaches opencode)`, () => {
  const none = useNoOpencode({ env: { OPENCODE_CONDUCTOR_TOOLSETS: "workflows" } });

  it("lists the project's workflows, a malformed one with its error naming the field and line", async () => {
    await mkdir(join(project, ".opencode", "workflows"), { recursive: true });
    await writeFile(join(project, ".opencode", "workflows", "good.yaml"), GOOD);
    await writeFile(join(project, ".opencode", "workflows", "bad.yml"), GOOD.replace("kind: agent", "kind: robot"));
    const m = await none.mcp();
    const r = await m.call(TOOL, { action: "list", directory: project });
    expect(r.isError, r.text).toBe(false);
    expect(r.text).toContain("good: fix(agent)");
    expect(r.text).toContain("bad: refused: ");
    expect(r.text).toContain('bad.yml:6: steps[0].kind: unknown step kind "robot"');
    expect((r.data.workflows as Array<{ name: string }>).map((w) => w.name)).toEqual(["bad", "good"]);
  });

  it.each([
    [{ action: "start", text: GOOD.replace("kind: agent", "kind: robot"), inputs: { bug: "b" } }, 'inline:6: steps[0].kind: unknown step kind "robot"'],
    [{ action: "start", text: GOOD }, 'needs the input "bug"'],
    [{ action: "start", text: GOOD.replace("{{inputs.bug}}", "{{steps.later.output}}"), inputs: { bug: "b" } }, 'no earlier step is named "later"'],
    [{ action: "start", workflow: "missing", inputs: {} }, 'No workflow "missing"'],
    [{ action: "status" }, 'action "status" needs `run`'],
    [{ action: "status", run: "wfr_nothere" }, 'No workflow run "wfr_nothere"'],
    [{ action: "answer", run: "wfr_nothere" }, 'action "answer" needs `approve`'],
  ])("refuses %j before anything runs", async (args, message) => {
    const m = await none.mcp();
    expectCleanError(await m.call(TOOL, args), message);
    expect((await m.call(TOOL, { action: "list" })).data.runs).toEqual([]);
  });
});

describe(`${TOOL} list without a project directory`, () => {
  const none = useNoOpencode({ env: { OPENCODE_CONDUCTOR_TOOLSETS: "workflows" } });
  // A sign-off alone: the run stops at it without a word to opencode (nothing is recorded to replay).
  const SIGN_OFF = "name: sign only\nsteps:\n  - name: ok\n    kind: approval\n    message: 'Ship it?'\n";

  it("lists the state dir's runs and says the workflow files need a directory, instead of refusing", async () => {
    // An MCP server whose opencode connection names no project directory.
    const m = await none.mcp({ client: connect({ url: REPLAY_URL }) });
    expect(m.conductor.engine.directory).toBeUndefined();
    const empty = await m.call(TOOL, { action: "list" });
    expect(empty.isError, empty.text).toBe(false);
    expect(empty.text).toContain("Workflow files: not listed, no project directory: give `directory`");
    expect(empty.text).toContain("No runs.");
    expect(empty.data).toMatchObject({ workflows: [], runs: [] });

    const started = await m.call(TOOL, { action: "start", text: SIGN_OFF, directory: project, timeout_s: 30 });
    expect(started.isError, started.text).toBe(false);
    const run = started.data.run as { id: string; status: string };
    expect(run.status).toBe("blocked");
    const listed = await m.call(TOOL, { action: "list" });
    expect(listed.isError, listed.text).toBe(false);
    expect(listed.text).toContain("Workflow files: not listed, no project directory");
    expect(listed.text).toContain(`${run.id} sign only: blocked, at ok`);
    expect(listed.data.runs).toEqual([expect.objectContaining({ id: run.id, workflow: "sign only", status: "blocked", step: "ok" })]);
  });
});
