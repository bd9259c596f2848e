// The library's entry point: one object per opencode server, holding the client, the shared event
// stream and settings, with every core capability as a method.
import { connect, type ConnectOptions, type OpencodeClient } from "../client/connect.js";
import { answerPermission, answerQuestion, listPending, type AnswerPermission, type AnswerQuestion, type PendingRequest } from "./approvals.js";
import type { CoreContext, CoreSettings, SessionDefaults } from "./context.js";
import { interrupt, result, send, wait, type SendOptions } from "./control.js";
import { delegate, type DelegateOptions } from "./delegate.js";
import { EventHub } from "./event-hub.js";
import { parallel, type ParallelOptions, type ParallelTask } from "./parallel.js";
import type { Detail } from "./summary.js";
import type { WaitOptions } from "./turn.js";

export type ConductorOptions = (ConnectOptions | { client: OpencodeClient }) & CoreSettings;

export class Conductor implements CoreContext {
  readonly client: OpencodeClient;
  readonly hub: EventHub;
  readonly settings: CoreSettings;
  readonly sessionDefaults = new Map<string, SessionDefaults>();

  constructor(options: ConductorOptions) {
    this.client = "client" in options ? options.client : connect(options);
    this.hub = new EventHub(this.client);
    this.settings = { defaultModel: options.defaultModel, modelAllow: options.modelAllow, modelBlock: options.modelBlock };
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

  /** Permission requests and questions waiting for an answer. */
  pending(options: { sessionId?: string } = {}): Promise<PendingRequest[]> {
    return listPending(this.client, options.sessionId ? [options.sessionId] : undefined);
  }

  /** Answers a permission request (`requestId` + `decision`) or a question (`questionId` + `answers` or `reject`). */
  answer(answer: AnswerPermission | AnswerQuestion): Promise<void> {
    return "requestId" in answer ? answerPermission(this.client, answer) : answerQuestion(this.client, answer);
  }

  /** Closes the event stream now (it also closes by itself shortly after the last wait). */
  close(): void {
    this.hub.close();
  }
}
