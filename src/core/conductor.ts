// The library's entry point: one object per opencode server, holding its engine (opencode 1.x or
// 2.x, picked by asking the server, engine/detect.ts), the shared event stream and settings, with
// every core capability as a method.
import type { AnswerPermission, AnswerQuestion, PendingRequest } from "./model/pending-request.js";
import { connect, type ConnectOptions, type OpencodeClient } from "../client/connect.js";
import { NotFoundError } from "../client/errors.js";
import { engineOfV1Client, lazyEngine, openEngine } from "./engine/detect.js";
import type { Engine } from "./engine/engine.js";
import { catalog, type CatalogKind } from "./catalog/catalogs.js";
import { listModels, type ListModelsOptions } from "./catalog/models.js";
import { serverStatus } from "./catalog/status.js";
import type { CoreContext, CoreSettings, DirectoryOption, SessionDefaults } from "./context.js";
import { InstanceLeases } from "./instances/leases.js";
import { Worktrees } from "./worktrees/worktrees.js";
import type { InstanceManager } from "./instances/manager.js";
import { sessionsApi, type SessionsApi } from "./sessions/api.js";
import { send } from "./control.js";
import { UnknownRequestError } from "./errors.js";
import { EventHub } from "./event-hub.js";
import { resumeDelegation, type ResumeOptions } from "./resume.js";
import { endLine, taskRecordsFor } from "./governance/task-lines.js";
import type { TaskRecords } from "./governance/task-records.js";
import { delegationsApi, type DelegationsApi } from "./ledger/delegations.js";
import { FileLedgerStore } from "./ledger/file-store.js";
import { Ledger, stateDirLedger } from "./ledger/ledger.js";
import { MemoryLedgerStore } from "./ledger/store.js";
import { waitAll, type WaitAllOptions } from "./parallel.js";
import { interruptAt, resultAt, waitAt, type FollowUpOptions } from "./placement/follow-ups.js";
import type { PlacedBatch, PlacedResult } from "./placement/result.js";
import { startBatch, startTask, type BatchOptions, type BatchTask, type TaskOptions } from "./placement/run.js";
import { startSend, type SendStartOptions } from "./placement/send.js";
import { sessionScope } from "./sessions/scope.js";
import type { Detail } from "./turns/summary.js";
import { runningWatch, runningWatches } from "./turns/kept-watches.js";
import { blockingRequests } from "./turns/blocking-requests.js";
import type { TaskQueue } from "./queue/client.js";
import { queueSettingsFromEnv, type QueueSettings } from "./queue/settings.js";
import { workflowsApi, type StartWorkflowOptions, type WaitRunOptions, type WorkflowsApi } from "./workflows/api.js";
import type { WorkflowRun } from "./workflows/run-record.js";
import { isSessionId } from "./inputs/ids.js";

const HOLDS_TIMEOUT_MS = 5_000;

/** Does this server hold the session? A server that does not answer in 5 s does not. */
async function holdsSession(c: Conductor, sessionId: string): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      c.engine.getSession(sessionId),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("no answer")), HOLDS_TIMEOUT_MS))),
    ]);
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `url` (+ password, directory): the engine is picked on first use by asking the server; `client`:
 * a 1.x client, used as is; `engine`: an engine built elsewhere (e.g. `Conductor.connect`).
 */
export type ConductorOptions = (ConnectOptions | { client: OpencodeClient } | { engine: Engine; client?: OpencodeClient }) & ConductorExtras;

/** What a conductor holds besides its connection: settings, private instances, the queue, the state dir. */
export type ConductorExtras = CoreSettings & {
  /**
   * Private instances for `isolation: "instance"` (e.g. `new InstanceManager({ stateDir, ttlS })`),
   * or leases shared with other conductors; without it, such a task is refused.
   */
  instances?: InstanceManager | InstanceLeases<Conductor>;
  /** Worktree tasks (`isolation: "worktree"`); default: in `stateDir`, else in the private instances' state dir. */
  worktrees?: Worktrees;
  /**
   * Run delegate/parallel/wait/result/interrupt as jobs on a Redis-backed BullMQ queue, by workers
   * (docs/scaling.md). Default: OPENCODE_CONDUCTOR_QUEUE; `false`: always in this process.
   */
  queue?: QueueSettings | false;
  /**
   * Where the delegation ledger (request ids, `conductor.delegations`) and the task records the
   * web console reads are kept, e.g. the MCP server's OPENCODE_CONDUCTOR_STATE_DIR. Without it they
   * are kept in this object's memory (request ids de-duplicate here only; no task records). With a
   * queue, the ledger lives in the queue's Redis.
   */
  stateDir?: string;
};

/** delegate's options: the core's, plus where to run (`isolation`, `repo`) and the idempotency key (`requestId`). */
export type ConductorDelegateOptions = TaskOptions;

/** What delegate answers, wherever the task ran. */
export type ConductorDelegateResult = PlacedResult;

export class Conductor implements CoreContext {
  readonly engine: Engine;
  /**
   * The typed 1.x client (oc_api, feature detection, tests that read opencode's own record); against
   * a 2.x server, use `engine`. Not part of CoreContext: the core's verbs use the engine alone.
   */
  readonly client: OpencodeClient;
  readonly hub: EventHub;
  readonly settings: CoreSettings;
  readonly sessionDefaults = new Map<string, SessionDefaults>();
  /** Session actions: `conductor.sessions.info(id)`, `.diff(id)`, `.fork(id)`, … */
  readonly sessions: SessionsApi = sessionsApi(this);
  /** Private instances, when configured (see ConductorOptions.instances). */
  readonly instances?: InstanceLeases<Conductor>;
  /** Worktree tasks' worktrees, branches and their registry (see ConductorOptions.worktrees). */
  readonly worktrees?: Worktrees;
  readonly queueSettings?: QueueSettings;
  /** The state dir of the ledger and the task records, when given. */
  readonly stateDir?: string;
  /** The delegation ledger: every accepted delegate and parallel call, by id and by request id. */
  readonly ledger: Ledger;
  /** The task records the web console reads (with a state dir). */
  readonly records?: TaskRecords;
  /** Delegations by id: `conductor.delegations.get(id)`, `.wait(id)`, `.cancel(id)`, `.list()`; `.delegate(…)` answers a handle at once. */
  readonly delegations: DelegationsApi;
  /** The queue's client, loaded on first use (docs/architecture.md, glossary: the queue, the fleet). */
  private queue?: Promise<TaskQueue>;
  /** Conductors of the fleet's opencode servers, by URL (sessions a worker ran live there). */
  private readonly peers = new Map<string, { conductor: Conductor; password?: string }>();

  /** Asks the server what it is now (1.x or 2.x) and connects the engine for it; fails early when it cannot. */
  static async connect(options: ConnectOptions & ConductorExtras): Promise<Conductor> {
    const client = connect(options);
    return new Conductor({ ...options, client, engine: await openEngine(options, client) });
  }

  constructor(options: ConductorOptions) {
    if ("engine" in options) {
      this.engine = options.engine;
      this.client = options.client ?? connect({ url: options.engine.url, directory: options.engine.directory });
    } else if ("client" in options) {
      this.client = options.client;
      this.engine = engineOfV1Client(options.client);
    } else {
      this.client = connect(options);
      this.engine = lazyEngine(options, this.client);
    }
    this.hub = new EventHub(this.engine);
    this.settings = {
      defaultModel: options.defaultModel,
      modelAllow: options.modelAllow,
      modelBlock: options.modelBlock,
      fallbackModels: options.fallbackModels,
      retryTimeoutS: options.retryTimeoutS,
    };
    const instances = options.instances;
    this.instances =
      instances instanceof InstanceLeases
        ? instances
        : instances &&
          new InstanceLeases(instances, (i) => new Conductor({ url: i.url, password: i.password, directory: i.directory, ...this.settings, queue: false }));
    this.queueSettings = options.queue === false ? undefined : (options.queue ?? queueSettingsFromEnv());
    this.stateDir = options.stateDir;
    const stateDir = options.stateDir;
    const worktreeDir = stateDir ?? this.instances?.manager.registry.stateDir;
    this.worktrees = options.worktrees ?? (worktreeDir ? new Worktrees({ stateDir: worktreeDir }) : undefined);
    this.ledger = this.queueSettings
      ? new Ledger(async () => (await this.taskQueue()!).ledgerStore())
      : stateDir
        ? stateDirLedger(stateDir, async () => new FileLedgerStore(stateDir))
        : new Ledger(async () => new MemoryLedgerStore());
    this.records = stateDir ? taskRecordsFor(stateDir) : undefined;
    this.delegations = delegationsApi(this);
  }

  /** Workflow runs (docs/workflows.md): start, wait, answer a sign-off, resume, cancel, retry; kept in the state dir, audited in `<stateDir>/audit.jsonl`. */
  get workflows(): WorkflowsApi {
    return workflowsApi(this);
  }

  /** Starts a workflow run and waits until it stops: at a sign-off (`blocked`), or at its end. */
  async workflow(options: StartWorkflowOptions & WaitRunOptions): Promise<WorkflowRun> {
    const run = await this.workflows.start(options);
    return this.workflows.wait(run.id, options);
  }

  /** The fleet's queue, when one is configured (loaded only then: no Redis connection otherwise). */
  taskQueue(): Promise<TaskQueue> | undefined {
    const settings = this.queueSettings;
    if (!settings) return undefined;
    return (this.queue ??= import("./queue/client.js").then(({ TaskQueue }) => new TaskQueue(settings)));
  }

  /**
   * With a queue: the conductor of the fleet's opencode server that holds a session a worker ran
   * (the task record says which; a session the index does not name, e.g. a fork, is looked for on
   * each server of the fleet). Undefined when the session is not the fleet's. `indexOnly`: the
   * index alone (one Redis read, no server asked).
   */
  async fleetHolder(sessionId: string, o: { indexOnly?: boolean } = {}): Promise<Conductor | undefined> {
    const queue = this.taskQueue();
    if (!queue || !isSessionId(sessionId)) return undefined;
    const q = await queue;
    const access = await q.serverOf(sessionId);
    if (access) return access.url === this.engine.url ? undefined : this.peer(access);
    if (o.indexOnly) return undefined;
    // Not indexed: a session of this server (the usual case), or one made on a worker's server (a fork).
    if (await holdsSession(this, sessionId)) return undefined;
    for (const server of await q.servers()) {
      if (server.url === this.engine.url) continue;
      const peer = this.peer(server);
      if (!(await holdsSession(peer, sessionId))) continue;
      await q.indexSession(sessionId, server.url).catch(() => undefined); // the next reader finds it at once
      return peer;
    }
    return undefined;
  }

  /** The passwords of the fleet's servers this conductor reached (to scrub from any answer). */
  fleetSecrets(): string[] {
    return [...this.peers.values()].flatMap((p) => (p.password ? [p.password] : []));
  }

  private peer(access: { url: string; username?: string; password?: string }): Conductor {
    let peer = this.peers.get(access.url);
    if (!peer) {
      const conductor = new Conductor({ url: access.url, password: access.password, username: access.username, ...this.settings, queue: false });
      this.peers.set(access.url, (peer = { conductor, password: access.password }));
    }
    return peer.conductor;
  }

  /**
   * Hands a task to an agent (new, continued or forked session) where it belongs (here, a private
   * instance, or the fleet) and, by default, waits for the result. With `requestId`, a repeat (also
   * after a restart, with a state dir or a queue) answers the first start's session, `replayed`.
   */
  async delegate(options: ConductorDelegateOptions): Promise<ConductorDelegateResult> {
    return startTask(this, options).result;
  }

  /** Follows a delegation whose caller came back (an approval answered): waits for its turn, then runs its checks. */
  async resume(sessionId: string, options?: ResumeOptions) {
    const r = await resumeDelegation(this, sessionId, options);
    await this.records?.append(endLine(r));
    return r;
  }

  /** As resume, for a batch's sessions (in task order; undefined: a task that never started). */
  async resumeBatch(sessionIds: ReadonlyArray<string | undefined>, options?: WaitAllOptions) {
    const batch = await waitAll(this, sessionIds, options);
    await Promise.all(batch.results.map((r) => (r.sessionId ? this.records?.append(endLine(r)) : undefined)));
    return batch;
  }

  /** Waits for a batch's sessions at once, in input order (e.g. after a restart, with the ids a batch started). */
  waitAll(sessionIds: ReadonlyArray<string | undefined>, options?: WaitAllOptions) {
    return waitAll(this, sessionIds, options);
  }

  /** Models a caller may use (after the allow and block globs). */
  models(options?: ListModelsOptions) {
    return listModels(this, options);
  }

  /** Health, version, default model and catalog counts of the server. */
  status(options?: DirectoryOption) {
    return serverStatus(this, options);
  }

  /** Compact rows of one of the server's catalogs: agents, skills, commands, mcp, providers, projects. */
  catalog<K extends CatalogKind>(kind: K, options?: DirectoryOption) {
    return catalog(this, kind, options);
  }

  /** Runs independent tasks at once, one session each; one failure never fails the others. With a queue, as jobs for the fleet. */
  async parallel(tasks: BatchTask[], options?: BatchOptions): Promise<PlacedBatch> {
    return startBatch(this, tasks, options).result;
  }

  /**
   * Queues a message after the current turn, or steers it into the turn (opencode 1.x: interrupt,
   * then continue with it). With `requestId`, under the ledger: a repeat sends nothing again.
   */
  async send(sessionId: string, message: string, options?: SendStartOptions) {
    if (options?.requestId !== undefined) return startSend(this, sessionId, message, options).result;
    return send((await this.fleetHolder(sessionId)) ?? this, sessionId, message, options);
  }

  /** Stops a session's turn; with a queue, a task or batch id cancels it (queued or running). */
  interrupt(id: string, options?: { detail?: Detail }) {
    return interruptAt(this, id, options);
  }

  /** Waits for a session's turn; with a queue, a task id waits for the task, a batch id for the whole batch (`batch`). */
  wait(id: string, options?: FollowUpOptions) {
    return waitAt(this, id, options);
  }

  /** A session's state now, without waiting; with a queue, a task's. */
  result(id: string, options?: { detail?: Detail }) {
    return resultAt(this, id, options);
  }

  /**
   * Permission requests and questions waiting for an answer: those of one session, or all of the
   * default directory and of the turns this conductor follows (opencode keeps them per directory).
   */
  async pending(options: { sessionId?: string } = {}): Promise<PendingRequest[]> {
    if (options.sessionId) {
      const holder = await this.fleetHolder(options.sessionId);
      if (holder) return holder.pending(options);
      const ctx = await sessionScope(this, options.sessionId);
      const sessions = runningWatches(this).find((w) => w.sessionId === options.sessionId)?.sessions ?? [options.sessionId];
      // With the requests of the sub-agent sessions it started, which block its turn (blocking-requests.ts).
      return (await blockingRequests(ctx.engine, sessions)).requests;
    }
    const directories = new Set([this.engine.directory, ...runningWatches(this).map((w) => w.directory)]);
    const lists = await Promise.all([...directories].map((d) => this.engine.withDirectory(d).listPending()));
    // With a queue, what waits in the workers' sessions too (published in Redis by the workers).
    const queue = this.taskQueue();
    const onFleet = queue ? (await (await queue).pending()).map((r) => r.request) : [];
    return [...new Map([...lists.flat(), ...onFleet].map((r) => [r.id, r])).values()];
  }

  /** This conductor follows a turn of the session (it started or waited on it, and the turn goes on): the session is on its server. */
  follows(sessionId: string): boolean {
    return runningWatch(this, sessionId) !== undefined;
  }

  /** Answers a permission request (`requestId` + `decision`) or a question (`questionId` + `answers` or `reject`). */
  async answer(answer: AnswerPermission | AnswerQuestion): Promise<void> {
    const id = "requestId" in answer ? answer.requestId : answer.questionId;
    // A request in a worker's session is answered on that worker's opencode.
    const onFleet = await (await this.taskQueue())?.request(id);
    const access = onFleet && (await (await this.taskQueue())!.server(onFleet.server));
    if (onFleet && access && access.url !== this.engine.url) return this.peer(access).answer({ ...answer, sessionId: onFleet.request.sessionId });
    if (onFleet && !answer.sessionId) answer = { ...answer, sessionId: onFleet.request.sessionId };
    // The reply must go to the directory instance that asked (docs/opencode-behaviour.md §9).
    const directory = answer.sessionId ? (await sessionScope(this, answer.sessionId)).engine.directory : this.hub.directoryOf(id);
    const engine = directory === undefined ? this.engine : this.engine.withDirectory(directory);
    try {
      return await ("requestId" in answer ? engine.answerPermission(answer) : engine.answerQuestion(answer));
    } catch (error) {
      if (!(error instanceof NotFoundError) || answer.sessionId || directory !== undefined) throw error;
      throw new UnknownRequestError(error.message);
    }
  }

  /**
   * Closes the event stream now; waits still running fail. The stream also closes by itself shortly
   * after the last wait, unless a turn left running (`wait: false`, a timeout, blocked) is still
   * followed so that a later wait() can pick it up: call close() when done.
   */
  close(): void {
    this.hub.close();
    void this.queue?.then((q) => q.close());
    this.queue = undefined;
    for (const peer of this.peers.values()) peer.conductor.close();
    this.peers.clear();
    this.instances?.closeAll();
  }
}
