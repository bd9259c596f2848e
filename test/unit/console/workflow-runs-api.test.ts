// The console's workflow routes on a console started in this process over a temp state dir, with
// run records written by the run store (as a walker writes them): the list (newest first, each
// run's cost added up from its attempts), one run's record as the file holds it, the sign-off
// answer's refusals (no cookie or a foreign Origin, a bad decision, a run that waits for no
// sign-off, a run whose sessions the console cannot place on a server) and that a refusal changes
// nothing in the record.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startConsole, type RunningConsole } from "../../../src/console/server.js";
import { thisProcess } from "../../../src/core/ledger/record.js";
import { parseWorkflow } from "../../../src/core/workflows/parse.js";
import { newRunId, runCost, type WorkflowRun } from "../../../src/core/workflows/run-record.js";
import { RunStore } from "../../../src/core/workflows/run-store.js";

const WORKFLOW = parseWorkflow(`name: ship
steps:
  - name: implement
    kind: agent
    prompt: "Fix it"
  - name: sign-off
    kind: approval
    message: "Ship it?"
`);

let stateDir: string;
let running: RunningConsole;
let cookie: string;
let store: RunStore;
let blocked: WorkflowRun;
let done: WorkflowRun;

function run(status: WorkflowRun["status"], createdAt: string, costs: number[]): WorkflowRun {
  return {
    id: newRunId(),
    workflow: WORKFLOW,
    source: "inline",
    inputs: {},
    status,
    cursor: status === "blocked" ? 1 : 2,
    steps: [
      {
        name: "implement",
        kind: "agent",
        status: "done",
        attempts: costs.map((cost, i) => ({
          n: i + 1,
          status: "done",
          startedAt: createdAt,
          endedAt: createdAt,
          cost,
          turns: [{ sessionId: `ses_unknown${i}`, status: "done", cost }],
        })),
      },
      {
        name: "sign-off",
        kind: "approval",
        status: status === "blocked" ? "blocked" : "done",
        attempts: [{ n: 1, status: status === "blocked" ? "blocked" : "done", startedAt: createdAt, asked: "Ship it?" }],
      },
    ],
    owner: thisProcess(),
    createdAt,
    updatedAt: createdAt,
  };
}

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "occ-console-workflows-"));
  store = new RunStore(stateDir);
  blocked = run("blocked", "2026-05-02T00:00:00.000Z", [0.25, 0.5]);
  done = run("done", "2026-05-01T00:00:00.000Z", [1]);
  await store.create(blocked);
  await store.create(done);
  running = await startConsole({ config: { stateDir, auditPath: join(stateDir, "audit.jsonl") } });
  const signIn = await fetch(running.url, { redirect: "manual" });
  cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
});
afterAll(async () => {
  await running?.close();
  rmSync(stateDir, { recursive: true, force: true });
});

const get = (path: string, headers: Record<string, string> = { cookie }) => fetch(`${running.origin}${path}`, { headers });
const answer = (id: string, body: unknown, headers: Record<string, string> = { cookie, origin: running.origin }) =>
  fetch(`${running.origin}/api/workflows/${id}/answer`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });

describe("console /api/workflows", () => {
  it("needs the console's cookie", async () => {
    expect((await get("/api/workflows", {})).status).toBe(401);
    expect((await get(`/api/workflows/${blocked.id}`, {})).status).toBe(401);
  });

  it("lists the runs newest first, each with its step and its cost added up from the record", async () => {
    const body = (await (await get("/api/workflows")).json()) as { runs: Array<Record<string, unknown>> };
    expect(body.runs).toEqual([
      expect.objectContaining({ id: blocked.id, workflow: "ship", status: "blocked", step: "sign-off", cost: runCost(blocked) }),
      expect.objectContaining({ id: done.id, workflow: "ship", status: "done", cost: runCost(done) }),
    ]);
    expect(body.runs[1]!.step).toBeUndefined();
  });

  it("answers one run's record as the state dir holds it, and 404 for a run it does not hold", async () => {
    const body = (await (await get(`/api/workflows/${blocked.id}`)).json()) as { run: WorkflowRun; cost: number };
    expect(body.run).toEqual(await store.get(blocked.id));
    expect(body.cost).toBe(runCost(blocked));
    const missing = await get("/api/workflows/wfr_nosuchrun");
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: string }).error).toContain("no workflow run wfr_nosuchrun");
  });

  it("refuses a sign-off answer without the console's Origin, with a bad decision, for a run not waiting, and for a run it cannot place; the record is unchanged", async () => {
    const refused = await answer(blocked.id, { decision: "approve" }, { cookie });
    expect(refused.status).toBe(403);
    const bad = await answer(blocked.id, { decision: "maybe" });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toBe('decision must be "approve" or "reject"');
    const notWaiting = await answer(done.id, { decision: "approve" });
    expect(notWaiting.status).toBe(409);
    // Its sessions are in no task record, so the console knows no opencode server to walk it on.
    const unplaced = await answer(blocked.id, { decision: "approve" });
    expect(unplaced.status).toBe(409);
    expect(((await unplaced.json()) as { error: string }).error).toContain("follows no opencode server");
    expect(await store.get(blocked.id)).toEqual(blocked);
  });
});
