// An agent step: one delegation (or, with `each`, a batch of them) through the placement layer,
// under the ledger with a request id of its own per attempt. That id is what makes a run
// resumable: after a crash the same attempt is started again with the same id, and the ledger
// answers the first start's session (re-attached and waited for) instead of prompting again. A
// step sent back (a failed check, a review's comments) continues its sessions with the feedback;
// a worktree task cannot be continued (its instance stops once the branch is committed), so it
// starts again from its branch's head, with the task and the feedback. With a queue, a worktree
// step is a `repo` task for the workers (fleet-repo.ts): each attempt gets a fresh worktree on a
// worker, and its pushed branch is fetched here for the steps after it.
import type { PlacedResult } from "../../placement/result.js";
import { startBatch, startTask, type TaskOptions } from "../../placement/run.js";
import type { ParallelResult } from "../../parallel.js";
import type { PlacementHost } from "../../placement/host.js";
import type { TaskView } from "../../queue/outcome.js";
import type { AgentStep } from "../definition.js";
import type { Attempt, RecordedTurn } from "../run-record.js";
import { fill, itemsOf, type TemplateValues } from "../template.js";
import { fleetRepo, landedTurn } from "./fleet-repo.js";
import type { RepoSource } from "../../queue/spec.js";

/** Answer text kept per turn in the run record. */
const KEEP_ANSWER = 8_000;

export interface AgentRun {
  host: PlacementHost;
  step: AgentStep;
  attempt: Attempt;
  /** The same step's attempt before this one (sent back): its turns are continued. */
  previous?: Attempt;
  values: TemplateValues;
  directory?: string;
  /** `worktree` unless the step says otherwise and a later step delivers its branch; else `shared`. */
  isolation: "shared" | "worktree" | "instance";
  signal?: AbortSignal;
}

export async function runAgent(r: AgentRun): Promise<RecordedTurn[]> {
  const { step, attempt } = r;
  const here = r.directory ?? r.host.engine.directory ?? process.cwd();
  // A worktree on the fleet: the workers check the project's remote out, not this machine.
  const fleet = r.isolation === "worktree" && r.host.queueSettings !== undefined ? await fleetRepo(here, step.name) : undefined;
  const items = step.each ? itemsOf(r.values.inputs[step.each]) : [undefined];
  const tasks = items.map((item, i) => taskFor(r, item, r.previous?.turns?.[i], fleet));
  const requestId = attempt.requestId!;
  const land = (t: Summarised) => landedTurn(recordedTurn(t), t.task?.repo, here);
  if (!step.each) {
    const result = await startTask(r.host, { ...tasks[0]!, requestId, origin: "workflow" }).result;
    return [await land(result)];
  }
  const batch = await startBatch(r.host, tasks, { requestId, origin: "workflow", signal: r.signal, maxTokens: step.max_tokens, maxCostUsd: step.max_cost_usd })
    .result;
  return Promise.all(batch.results.map((t) => land(t)));
}

function taskFor(r: AgentRun, item: string | undefined, before: RecordedTurn | undefined, fleet: RepoSource | undefined): TaskOptions {
  const { step } = r;
  const prompt = fill(step.prompt, { ...r.values, item });
  const common: TaskOptions = {
    task: prompt,
    ...(step.model ? { model: step.model } : {}),
    ...(step.agent ? { agent: step.agent } : {}),
    ...(step.fallback_models ? { fallbackModels: step.fallback_models } : {}),
    ...(step.permissions ? { permissions: step.permissions } : {}),
    ...(!step.each && step.max_tokens ? { maxTokens: step.max_tokens } : {}),
    ...(!step.each && step.max_cost_usd ? { maxCostUsd: step.max_cost_usd } : {}),
    ...(step.timeout_s ? { timeoutMs: step.timeout_s * 1000 } : {}),
    ...(r.signal ? { signal: r.signal } : {}),
    title: `${step.name}${item ? ` (${item})` : ""}: ${prompt.split("\n")[0]!.slice(0, 50)}`,
  };
  const feedback = r.attempt.feedback;
  if (fleet) {
    // Sent back: a fresh worktree on a worker from the branch the last attempt pushed.
    if (!feedback || !before?.sessionId) return { ...common, repo: fleet };
    const ref = before.worktree?.branch ?? before.worktree?.base ?? fleet.ref;
    return { ...common, repo: { ...fleet, ref }, task: `${prompt}\n\n${feedback}` };
  }
  if (!feedback || !before?.sessionId) return { ...common, ...placement(r) };
  if (r.isolation === "worktree") {
    // A fresh worktree from where the last one ended, told the task and what to change.
    const base = before.worktree?.branch ?? before.worktree?.head;
    return { ...common, ...placement(r), ...(base ? { base } : {}), task: `${prompt}\n\n${feedback}` } as TaskOptions;
  }
  // The same session goes on (it stays where it lives: here, or its private instance).
  return { ...common, sessionId: before.sessionId, task: feedback };
}

/** Where a new task runs: the step's isolation, passed through the placement's options. */
function placement(r: AgentRun): Partial<TaskOptions> {
  const isolation = r.isolation === "shared" ? undefined : r.isolation;
  return { ...(r.directory ? { directory: r.directory } : {}), ...(isolation ? ({ isolation } as Partial<TaskOptions>) : {}) };
}

type Summarised = (PlacedResult | ParallelResult) & {
  task?: TaskView;
  worktree?: { branch?: string; base?: string; head?: string; path?: string };
};

/** What the run record keeps of a turn: the core's summary of opencode's record, clipped. */
export function recordedTurn(r: Summarised): RecordedTurn {
  const tokens = "tokens" in r && r.tokens ? Object.values(r.tokens).reduce((a: number, b) => a + (typeof b === "number" ? b : 0), 0) : undefined;
  const files = "files" in r && r.files ? r.files.map((f) => f.path) : undefined;
  // Run on the fleet: which task, worker and opencode server (the session is that server's).
  const task = "task" in r ? r.task : undefined;
  // A repo task's worktree was the worker's (its directory is there): its base and remote here.
  const wt = r.worktree;
  const worktree = task?.repo
    ? { base: task.repo.base, repo: task.repo.url }
    : wt
      ? { branch: wt.branch, base: wt.base, head: wt.head, directory: wt.path }
      : undefined;
  const server = task?.attempts.at(-1)?.server;
  const queued = task ? { taskId: task.id, ...(task.worker ? { worker: task.worker } : {}), ...(server ? { server } : {}) } : undefined;
  return {
    ...(r.sessionId ? { sessionId: r.sessionId } : {}),
    status: r.status,
    ...(r.answer ? { answer: r.answer.length > KEEP_ANSWER ? `${r.answer.slice(0, KEEP_ANSWER)}…` : r.answer } : {}),
    ...("cost" in r && r.cost !== undefined ? { cost: r.cost } : {}),
    ...(tokens ? { tokens } : {}),
    ...(r.error ? { error: { name: r.error.name, message: r.error.message } } : {}),
    ...(files?.length ? { files } : {}),
    ...(worktree ? { worktree } : {}),
    ...(!task?.repo && "directory" in r && typeof r.directory === "string" ? { directory: r.directory } : {}),
    ...(queued ? { queued } : {}),
  };
}
