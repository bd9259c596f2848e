// The library's entry point: one object per opencode server, holding the client, the shared event
// stream and settings, with every core capability as a method.
import { connect, type ConnectOptions, type OpencodeClient } from "../client/connect.js";
import { NotFoundError } from "../client/errors.js";
import { answerPermission, answerQuestion, listPending, type AnswerPermission, type AnswerQuestion, type PendingRequest } from "./policy/approvals.js";
import type { CoreContext, CoreSettings, SessionDefaults } from "./context.js";
import { interrupt, result, send, wait, type SendOptions } from "./control.js";
import { delegate, type DelegateOptions } from "./delegate.js";
import { UsageError } from "./errors.js";
import { EventHub } from "./event-hub.js";
import { parallel, type ParallelOptions, type ParallelTask } from "./parallel.js";
import { sessionScope } from "./sessions/scope.js";
import type { Detail } from "./turns/summary.js";
import { runningWatches } from "./turns/kept-watches.js";
import type { WaitOptions } from "./turns/turn.js";
import type { TaskQueue } from "./queue/client.js";
import { queueSettingsFromEnv, type QueueSettings } from "./queue/settings.js";
import type { QueuedDelegateOptions } from "./queue/spec.js";

export type ConductorOptions = (ConnectOptions | { client: OpencodeClient }) &
  CoreSettings & {
    /**
     * Run delegate/parallel/wait/result/interrupt as jobs on a Redis-backed BullMQ queue, by workers
     * (docs/scaling.md). Default: OPENCODE_CONDUCTOR_QUEUE; `false`: always in this process.
     */
    queue?: QueueSettings | false;
  };

/** opencode's session ids; anything else given to wait/result/interrupt with a queue is a task id. */
const isSessionId = (id: string) => typeof id === "string" && id.startsWith("ses_");

export class Conductor implements CoreContext {
  readonly client: OpencodeClient;
  readonly hub: EventHub;
  readonly settings: CoreSettings;
  readonly sessionDefaults = new Map<string, SessionDefaults>();
  readonly queueSettings?: QueueSettings;
  private fleet?: Promise<TaskQueue>;

  constructor(options: ConductorOptions) {
    this.client = "client" in options ? options.client : connect(options);
    this.hub = new EventHub(this.client);
    this.settings = {
      defaultModel: options.defaultModel,
      modelAllow: options.modelAllow,
      modelBlock: options.modelBlock,
      fallbackModels: options.fallbackModels,
      retryTimeoutS: options.retryTimeoutS,
    };
    this.queueSettings = options.queue === false ? undefined : (options.queue ?? queueSettingsFromEnv());
  }

  /** The fleet's queue, when one is configured (loaded only then: no Redis client otherwise). */
  taskQueue(): Promise<TaskQueue> | undefined {
    const settings = this.queueSettings;
    if (!settings) return undefined;
    return (this.fleet ??= import("./queue/client.js").then(({ TaskQueue }) => new TaskQueue(settings)));
  }

  /** Hands a task to an agent (new, continued or forked session) and, by default, waits for the result. */
  async delegate(options: DelegateOptions & Pick<QueuedDelegateOptions, "repo" | "guard" | "requestId">) {
    const fleet = this.taskQueue();
    return fleet ? (await fleet).delegate(options) : delegate(this, options);
  }

  /** Runs independent tasks at once, one session each; one failure never fails the others. */
  async parallel(tasks: Array<ParallelTask & Pick<QueuedDelegateOptions, "repo" | "guard">>, options?: ParallelOptions & { requestId?: string }) {
    const fleet = this.taskQueue();
    if (!fleet) return parallel(this, tasks, options);
    // The fleet's workers set how many run at once; approvals cannot reach a worker's session.
    const o = options ?? {};
    return (await fleet).parallel(tasks, { requestId: o.requestId, timeoutMs: o.timeoutMs, signal: o.signal, detail: o.detail, maxTokens: o.maxTokens, maxCostUsd: o.maxCostUsd, onTaskProgress: o.onProgress });
  }

  /** Queues a message after the current turn, or steers (interrupt, then continue with it). */
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
      return listPending(ctx.client, sessions);
    }
    const directories = new Set([this.client.directory, ...runningWatches(this).map((w) => w.directory)]);
    const lists = await Promise.all([...directories].map((d) => listPending(d === this.client.directory ? this.client : this.client.withDirectory(d))));
    return [...new Map(lists.flat().map((r) => [r.id, r])).values()];
  }

  /** Answers a permission request (`requestId` + `decision`) or a question (`questionId` + `answers` or `reject`). */
  async answer(answer: AnswerPermission | AnswerQuestion): Promise<void> {
    const id = "requestId" in answer ? answer.requestId : answer.questionId;
    // The reply must go to the directory instance that asked (docs/opencode-behaviour.md §9).
    const directory = answer.sessionId ? (await sessionScope(this, answer.sessionId)).client.directory : this.hub.directoryOf(id);
    const client = directory === undefined || directory === this.client.directory ? this.client : this.client.withDirectory(directory);
    try {
      return await ("requestId" in answer ? answerPermission(client, answer) : answerQuestion(client, answer));
    } catch (error) {
      if (!(error instanceof NotFoundError) || answer.sessionId || directory !== undefined) throw error;
      throw new UsageError(`${error.message}. It may be answered already, or belong to a session in another project directory: pass its sessionId.`);
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
  }
}
