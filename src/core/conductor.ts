// The library's entry point: one object per opencode server, holding its engine (opencode 1.x or
// 2.x, picked by asking the server, engine/detect.ts), the shared event stream and settings, with
// every core capability as a method.
import { connect, type ConnectOptions, type OpencodeClient } from "../client/connect.js";
import { NotFoundError } from "../client/errors.js";
import { lazyEngine, openEngine } from "./engine/detect.js";
import type { Engine } from "./engine/engine.js";
import { V1Engine } from "./engine/v1.js";
import type { AnswerPermission, AnswerQuestion, PendingRequest } from "./policy/approvals.js";
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

/**
 * `url` (+ password, directory): the engine is picked on first use by asking the server; `client`:
 * a 1.x client, used as is; `engine`: an engine built elsewhere (e.g. `Conductor.connect`).
 */
export type ConductorOptions = (ConnectOptions | { client: OpencodeClient } | { engine: Engine; client?: OpencodeClient }) & CoreSettings;

export class Conductor implements CoreContext {
  readonly engine: Engine;
  /** The typed 1.x client (oc_api, feature detection); against a 2.x server, use `engine`. */
  readonly client: OpencodeClient;
  readonly hub: EventHub;
  readonly settings: CoreSettings;
  readonly sessionDefaults = new Map<string, SessionDefaults>();

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
  }

  /** Hands a task to an agent (new, continued or forked session) and, by default, waits for the result. */
  delegate(options: DelegateOptions) {
    return delegate(this, options);
  }

  /** Runs independent tasks at once, one session each; one failure never fails the others. */
  parallel(tasks: ParallelTask[], options?: ParallelOptions) {
    return parallel(this, tasks, options);
  }

  /** Queues a message after the current turn, or steers (interrupt, then continue with it). */
  send(sessionId: string, message: string, options?: SendOptions) {
    return send(this, sessionId, message, options);
  }

  interrupt(sessionId: string, options?: { detail?: Detail }) {
    return interrupt(this, sessionId, options);
  }

  wait(sessionId: string, options?: WaitOptions) {
    return wait(this, sessionId, options);
  }

  result(sessionId: string, options?: { detail?: Detail }) {
    return result(this, sessionId, options);
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
  }
}
