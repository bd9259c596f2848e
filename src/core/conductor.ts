// The library's entry point: one object per opencode server, holding its engine (opencode 1.x or
// 2.x, picked by asking the server, engine/detect.ts), the shared event stream and settings, with
// every core capability as a method.
import { connect, type ConnectOptions, type OpencodeClient } from "../client/connect.js";
import { NotFoundError } from "../client/errors.js";
import { lazyEngine, openEngine } from "./engine/detect.js";
import type { Engine } from "./engine/engine.js";
import { V1Engine } from "./engine/v1.js";
import type { AnswerPermission, AnswerQuestion, PendingRequest } from "./policy/approvals.js";
import { catalog, type CatalogKind } from "./catalog/catalogs.js";
import { listModels, type ListModelsOptions } from "./catalog/models.js";
import { serverStatus } from "./catalog/status.js";
import type { CoreContext, CoreSettings, DirectoryOption, SessionDefaults } from "./context.js";
// With a queue, anything but a session id given to wait/result/interrupt is a task id.
import { isSessionId } from "./inputs/ids.js";
import { InstanceLeases } from "./instances/leases.js";
import type { InstanceManager } from "./instances/manager.js";
import { guardedEnv } from "./policy/guard-rails.js";
import { permissionRules } from "./policy/permissions.js";
import { sessionsApi, type SessionsApi } from "./sessions/api.js";
import { interrupt, result, send, wait, type SendOptions } from "./control.js";
import { delegate, type DelegateOptions, type DelegateResult } from "./delegate.js";
import { UnknownRequestError, UsageError } from "./errors.js";
import { EventHub } from "./event-hub.js";
import { parallel, waitAll, type ParallelOptions, type ParallelTask, type WaitAllOptions } from "./parallel.js";
import { sessionScope } from "./sessions/scope.js";
import type { Detail } from "./turns/summary.js";
import { runningWatches } from "./turns/kept-watches.js";
import type { WaitOptions } from "./turns/turn.js";
import type { TaskQueue } from "./queue/client.js";
import { queueSettingsFromEnv, type QueueSettings } from "./queue/settings.js";
import type { QueuedDelegateOptions } from "./queue/spec.js";
import type { TaskView } from "./queue/outcome.js";

/**
 * `url` (+ password, directory): the engine is picked on first use by asking the server; `client`:
 * a 1.x client, used as is; `engine`: an engine built elsewhere (e.g. `Conductor.connect`).
 */
export type ConductorOptions = (ConnectOptions | { client: OpencodeClient } | { engine: Engine; client?: OpencodeClient }) &
  CoreSettings & {
    /**
     * Private instances for `isolation: "instance"` (e.g. `new InstanceManager({ stateDir, ttlS })`),
     * or leases shared with other conductors; without it, such a task is refused.
     */
    instances?: InstanceManager | InstanceLeases<Conductor>;
    /**
     * Run delegate/parallel/wait/result/interrupt as jobs on a Redis-backed BullMQ queue, by workers
     * (docs/scaling.md). Default: OPENCODE_CONDUCTOR_QUEUE; `false`: always in this process.
     */
    queue?: QueueSettings | false;
  };

export interface ConductorDelegateOptions extends DelegateOptions {
  /**
   * `instance`: run on a private opencode server for `directory` (started or reused), under the
   * guard rails; its session is recorded in the instance registry. Default `shared`.
   */
  isolation?: "shared" | "instance";
}

export type ConductorDelegateResult = DelegateResult & {
  isolation?: "instance";
  /** A command to watch the session live (no password in it). */ attach?: string;
};

export class Conductor implements CoreContext {
  readonly engine: Engine;
  /** The typed 1.x client (oc_api, feature detection); against a 2.x server, use `engine`. */
  readonly client: OpencodeClient;
  readonly hub: EventHub;
  readonly settings: CoreSettings;
  readonly sessionDefaults = new Map<string, SessionDefaults>();
  /** Session actions: `conductor.sessions.info(id)`, `.diff(id)`, `.fork(id)`, … */
  readonly sessions: SessionsApi = sessionsApi(this);
  /** Private instances, when configured (see ConductorOptions.instances). */
  readonly instances?: InstanceLeases<Conductor>;
  readonly queueSettings?: QueueSettings;
  private fleet?: Promise<TaskQueue>;

  /** Asks the server what it is now (1.x or 2.x) and connects the engine for it; fails early when it cannot. */
  static async connect(options: ConnectOptions & CoreSettings): Promise<Conductor> {
    const client = connect(options);
    return new Conductor({ ...options, client, engine: await openEngine(options, client) });
  }

  constructor(options: ConductorOptions) {
    if ("engine" in options) {
      this.engine = options.engine;
      this.client = options.client ?? connect({ url: options.engine.url, directory: options.engine.directory });
    } else if ("client" in options) {
      this.client = options.client;
      this.engine = new V1Engine(options.client);
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
  }

  /** The fleet's queue, when one is configured (loaded only then: no Redis connection otherwise). */
  taskQueue(): Promise<TaskQueue> | undefined {
    const settings = this.queueSettings;
    if (!settings) return undefined;
    return (this.fleet ??= import("./queue/client.js").then(({ TaskQueue }) => new TaskQueue(settings)));
  }

  /** Hands a task to an agent (new, continued or forked session) and, by default, waits for the result. */
  async delegate(
    options: ConductorDelegateOptions & Pick<QueuedDelegateOptions, "repo" | "guard" | "requestId">,
  ): Promise<ConductorDelegateResult & { task?: TaskView }> {
    const { isolation, ...task } = options;
    // With a queue, new work (not a continued session, not a private instance) is a job for the fleet.
    const fleet = isolation !== "instance" && task.sessionId === undefined ? this.taskQueue() : undefined;
    if (fleet) return (await fleet).delegate(task);
    if (task.repo !== undefined)
      throw new UsageError("`repo` tasks run on the fleet's workers: configure a queue (OPENCODE_CONDUCTOR_QUEUE, or `queue: { url }`).");
    if (isolation !== "instance") return delegate(this, task);
    if (!this.instances) throw new UsageError('isolation "instance" needs private instances: create the Conductor with `instances` (an InstanceManager).');
    const directory = task.directory ?? this.engine.directory;
    if (!directory) throw new UsageError('isolation "instance" needs `directory`: the project the private server works in.');
    const lease = await this.instances.lease(directory);
    try {
      let attach: string | undefined;
      // Instances always run under the guard rails; the caller's rules may restrict further.
      const permissions = lease.rules(permissionRules(task.permissions));
      const result = await delegate(lease.conductor, {
        ...task,
        directory: lease.directory,
        permissions,
        checkEnv: task.checkEnv ?? guardedEnv(process.env),
        // On record while it runs, so a restart finds it.
        onSession: async (id) => {
          attach = await lease.record({ id, title: task.title ?? task.task.split("\n")[0]!.slice(0, 60), model: task.model ?? "" });
          await task.onSession?.(id);
        },
      });
      return { ...result, isolation: "instance", ...(attach ? { attach } : {}) };
    } finally {
      lease.release();
    }
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

  /** Runs independent tasks at once, one session each; one failure never fails the others. */
  async parallel(tasks: Array<ParallelTask & Pick<QueuedDelegateOptions, "repo" | "guard">>, options?: ParallelOptions & { requestId?: string }) {
    const fleet = this.taskQueue();
    if (!fleet) return parallel(this, tasks, options);
    // The fleet's workers set how many run at once; approvals cannot reach a worker's session.
    const o = options ?? {};
    return (await fleet).parallel(tasks, {
      requestId: o.requestId,
      timeoutMs: o.timeoutMs,
      signal: o.signal,
      detail: o.detail,
      maxTokens: o.maxTokens,
      maxCostUsd: o.maxCostUsd,
      onTaskProgress: o.onProgress,
    });
  }

  /** Queues a message after the current turn, or steers it into the turn (opencode 1.x: interrupt, then continue with it). */
  send(sessionId: string, message: string, options?: SendOptions) {
    return send(this, sessionId, message, options);
  }

  /** Stops a session's turn; with a queue, a task id cancels the task (queued or running). */
  async interrupt(sessionId: string, options?: { detail?: Detail }) {
    const fleet = this.taskQueue();
    return fleet && !isSessionId(sessionId) ? (await fleet).cancel(sessionId) : interrupt(this, sessionId, options);
  }

  /** Waits for a session's turn; with a queue, a task id waits for the task on the fleet. */
  async wait(sessionId: string, options?: WaitOptions) {
    const fleet = this.taskQueue();
    return fleet && !isSessionId(sessionId) ? (await fleet).wait(sessionId, options) : wait(this, sessionId, options);
  }

  async result(sessionId: string, options?: { detail?: Detail }) {
    const fleet = this.taskQueue();
    if (!fleet || isSessionId(sessionId)) return result(this, sessionId, options);
    const last = await (await fleet).read(sessionId);
    return { sessionId: last.sessionId, state: last.status === "running" ? ("busy" as const) : ("idle" as const), last };
  }

  /**
   * Permission requests and questions waiting for an answer: those of one session, or all of the
   * default directory and of the turns this conductor follows (opencode keeps them per directory).
   */
  async pending(options: { sessionId?: string } = {}): Promise<PendingRequest[]> {
    if (options.sessionId) {
      const ctx = await sessionScope(this, options.sessionId);
      const sessions = runningWatches(this).find((w) => w.sessionId === options.sessionId)?.sessions ?? [options.sessionId];
      return ctx.engine.listPending(sessions);
    }
    const directories = new Set([this.engine.directory, ...runningWatches(this).map((w) => w.directory)]);
    const lists = await Promise.all([...directories].map((d) => this.engine.withDirectory(d).listPending()));
    return [...new Map(lists.flat().map((r) => [r.id, r])).values()];
  }

  /** Answers a permission request (`requestId` + `decision`) or a question (`questionId` + `answers` or `reject`). */
  async answer(answer: AnswerPermission | AnswerQuestion): Promise<void> {
    const id = "requestId" in answer ? answer.requestId : answer.questionId;
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
    void this.fleet?.then((q) => q.close());
    this.fleet = undefined;
    this.instances?.closeAll();
  }
}
