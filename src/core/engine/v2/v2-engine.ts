// The v2 engine: opencode 2.x through its v2 API (docs/opencode-2x-behaviour.md), every route by
// its adapter name (src/client/v2/routes.ts resolves it from the server's own spec, so the
// pre-release and 2.0.26 both work; a route the server lacks is a RouteMissingError naming the
// version). 2.x objects are mapped into the core's shapes (engine.ts says why). What 2.x cannot do
// is an UnsupportedOnEngineError that says what to do instead. This class is the outline; the logic
// lives beside it by concern: v2-sessions.ts, v2-prompts.ts, v2-history.ts, v2-requests.ts, v2-catalog.ts,
// v2-inbox.ts (prompts waiting in a running turn).
import type { AnswerPermission, AnswerQuestion } from "../../model/pending-request.js";
import type { FileDiff } from "../../model/file-change.js";
import type { Message } from "../../model/message.js";
import type { Session, SessionRunState } from "../../model/session.js";
import type { OpencodeV2Client } from "../../../client/v2/client.js";
import type { V2Event } from "../../../client/v2/event-framing.js";
import type { OpencodeEvent } from "../../../client/types.js";
import type { PermissionRule } from "../../policy/permissions.js";
import { activityV2, recordedMessagesV2, V2_MACHINE_OPTIONS } from "./v2-events.js";
import type { TurnMachineOptions } from "../../model/turn-event.js";
import {
  UnsupportedOnEngineError,
  type Engine,
  type EngineCapabilities,
  type EngineEventsOptions,
  type EngineInfo,
  type NewSession,
  type PromptInput,
  type SessionTranslator,
  type TurnSnapshot,
  type WaitingPrompt,
} from "../engine.js";
import type { HubEvent } from "../hub-events.js";
import { v2Catalog, v2ProviderCatalog } from "./v2-catalog.js";
import { allRawV2, lastTurnRawV2, newestMessageIdV2, pageRawV2, turnDiffV2 } from "./v2-history.js";
import {
  cancelQueuedV2,
  inboxCapabilities,
  queuedInputsV2,
  steerQueuedV2,
  waitingPromptV2,
  withdrawPromptV2,
  type InboxCapabilities,
  type QueuedInput,
} from "./v2-inbox.js";
import { messagesFromV2 } from "./v2-messages.js";
import { checkPromptV2, promptV2 } from "./v2-prompts.js";
import { answerPermissionV2, answerQuestionV2, listPendingV2 } from "./v2-requests.js";
import {
  childSessionsV2,
  compactV2,
  createSessionV2,
  dataOf,
  forkV2,
  getSessionV2,
  listSessionsV2,
  removeV2,
  renameV2,
  revertV2,
  setRulesV2,
  unrevertV2,
} from "./v2-sessions.js";
import { KnownSessions } from "./v2-known.js";
import { V2Signals, V2Usage } from "./v2-signals.js";

export class V2Engine implements Engine {
  constructor(
    readonly client: OpencodeV2Client,
    readonly directory: string | undefined,
    private readonly spec?: { version: string; sha256: string; doc: unknown },
    /** Shared by the directory-scoped copies: what the server's answers said of its sessions. */
    private readonly known = new KnownSessions(),
  ) {}

  get url(): string {
    return this.client.url;
  }

  private get version(): string {
    return this.client.identity.version;
  }

  withDirectory(directory: string | undefined): V2Engine {
    // 2.x routes take no directory: a session lives where it was created. The directory only
    // says where new sessions go.
    return directory === this.directory ? this : new V2Engine(this.client, directory, this.spec, this.known);
  }

  /**
   * From the server's own document, never its version: per-session rules where `session.create`
   * declares `permissions` (2.0.26), line counts where it has the per-session diff (2.0.26), and
   * what it can do with queued prompts (v2-inbox.ts).
   */
  async capabilities(): Promise<EngineCapabilities & InboxCapabilities> {
    const { routes } = this.client;
    return {
      nativeSteer: true,
      sessionRules: routes.get("session.create").bodyProperties.includes("permissions"),
      deleteMessages: false,
      compactNeedsModel: false,
      turnDiffLines: routes.has("session.diff"),
      ...inboxCapabilities(this.client),
    };
  }

  async info(): Promise<EngineInfo> {
    return { kind: "v2", version: this.version, capabilities: await this.capabilities() };
  }

  async openApi() {
    return this.spec;
  }

  async health(timeoutMs?: number): Promise<{ healthy: boolean; version: string }> {
    const body = (await this.client.request("server.info", {}, timeoutMs ? { timeoutMs } : {})) as { healthy?: boolean; version?: string };
    return { healthy: body.healthy ?? true, version: body.version ?? this.version };
  }

  async *events(options: EngineEventsOptions): AsyncGenerator<HubEvent> {
    for await (const event of this.client.events(options)) {
      if (event.type === "conductor.reconnected" || event.type === "conductor.disconnected") yield event as HubEvent;
      else if (event.type === "server.connected") yield { type: "server.connected", properties: {} } as OpencodeEvent;
      else yield { type: "v2.event", properties: event as V2Event };
    }
  }

  async watchKit(sessionId: string): Promise<{ machine: TurnMachineOptions; translator: SessionTranslator }> {
    return { machine: V2_MACHINE_OPTIONS, translator: new V2Signals(sessionId, this.directoryOf(sessionId)) };
  }

  async usageTranslator() {
    return new V2Usage();
  }

  private unsupported(what: string, instead?: string): never {
    throw new UnsupportedOnEngineError(what, this.version, instead);
  }

  // ------------------------------------------------------------------------------------------
  // Sessions (v2-sessions.ts)

  async createSession(o: NewSession): Promise<Session> {
    const session = await createSessionV2(this.client, this.directory, o);
    this.known.created(session); // its directory (the watch needs it) and what its first prompt need not switch
    return session;
  }

  getSession(id: string): Promise<Session> {
    return getSessionV2(this.client, id);
  }

  listSessions(o: { limit: number; search?: string }): Promise<Session[]> {
    return listSessionsV2(this.client, o);
  }

  childSessions(id: string): Promise<Session[]> {
    return childSessionsV2(this.client, id);
  }

  setRules(id: string, rules: PermissionRule[]): Promise<void> {
    return setRulesV2(this.client, id, rules);
  }

  rename(id: string, title: string): Promise<Session> {
    return renameV2(this.client, id, title);
  }

  archive(): Promise<Session> {
    this.unsupported("archive a session", "2.x has no archive; delete the session instead (oc_session delete)");
  }

  remove(id: string): Promise<boolean> {
    return removeV2(this.client, id);
  }

  fork(id: string, o: { messageId?: string }): Promise<Session> {
    return forkV2(this.client, id, o);
  }

  revert(id: string, o: { messageId: string; partId?: string }): Promise<Session> {
    return revertV2(this.client, id, o);
  }

  unrevert(id: string): Promise<Session> {
    return unrevertV2(this.client, id);
  }

  compact(id: string, o: { timeoutMs: number }): Promise<boolean> {
    return compactV2(this.client, id, o);
  }

  shell(): Promise<Message> {
    this.unsupported("run a shell command outside a turn through the conductor", "ask the agent to run it (oc_delegate / oc_send)");
  }

  todo(): Promise<never> {
    this.unsupported("list a session's todo items", "2.x has no todo route");
  }

  // ------------------------------------------------------------------------------------------
  // Turns

  checkPrompt(input: PromptInput): Promise<void> {
    return checkPromptV2(this.client, input);
  }

  prompt(id: string, input: PromptInput): Promise<void> {
    return promptV2(this.client, id, input, this.known.takeHeld(id));
  }

  waitingPrompt(id: string, sent: { inputId?: string }): Promise<WaitingPrompt | undefined> {
    return waitingPromptV2(this.client, id, sent.inputId);
  }

  /** 2.0.26's inbox cancel, verified by listing the inbox again; the pre-release refuses, naming its version. */
  withdrawPrompt(id: string, inputId: string): Promise<void> {
    return withdrawPromptV2(this.client, id, inputId);
  }

  async abort(id: string): Promise<void> {
    await this.client.request("session.interrupt", { path: { sessionID: id } });
  }

  async runState(id: string): Promise<SessionRunState> {
    // 2.x has no retry state to read: a session waiting to retry is `running`.
    return { type: activityV2(await this.client.request("session.active", {}), id) === "busy" ? "busy" : "idle" };
  }

  async snapshot(id: string): Promise<TurnSnapshot> {
    const [active, raw] = await Promise.all([this.client.request("session.active", {}), lastTurnRawV2(this.client, id)]);
    const directory = await this.directoryOf(id);
    return { activity: activityV2(active, id), records: recordedMessagesV2(raw), messages: messagesFromV2(raw, id, directory) };
  }

  async lastTurn(id: string): Promise<Message[]> {
    const [raw, directory] = await Promise.all([lastTurnRawV2(this.client, id), this.directoryOf(id)]);
    return messagesFromV2(raw, id, directory);
  }

  newestMessageId(id: string): Promise<string | undefined> {
    return newestMessageIdV2(this.client, id);
  }

  async messages(id: string): Promise<Message[]> {
    const [raw, directory] = await Promise.all([allRawV2(this.client, id), this.directoryOf(id)]);
    return messagesFromV2(raw, id, directory);
  }

  async messagesPage(id: string, o: { limit: number; before?: string }): Promise<{ messages: Message[]; nextBefore?: string }> {
    const [page, directory] = await Promise.all([pageRawV2(this.client, id, o), this.directoryOf(id)]);
    return { messages: messagesFromV2(page.data, id, directory), ...(page.nextBefore ? { nextBefore: page.nextBefore } : {}) };
  }

  async deleteMessage(): Promise<boolean> {
    return false; // 2.x has no route to delete a message: a fallback asks the next model to continue
  }

  turnDiff(id: string, messageId: string): Promise<FileDiff[]> {
    return turnDiffV2(this.client, id, messageId);
  }

  // ------------------------------------------------------------------------------------------
  // Pending input (v2-inbox.ts): 2.x only, so not on the Engine interface; capabilities() says
  // which of the three this server has.

  /** The prompts the session has admitted but not promoted yet (the pre-release and 2.0.26). */
  queuedInputs(id: string): Promise<QueuedInput[]> {
    return queuedInputsV2(this.client, id);
  }

  /** Takes a queued prompt back before it runs (2.0.26). */
  cancelQueued(id: string, inputId: string): Promise<void> {
    return cancelQueuedV2(this.client, id, inputId);
  }

  /** Turns a queued prompt into a steer (2.0.26). */
  steerQueued(id: string, inputId: string): Promise<void> {
    return steerQueuedV2(this.client, id, inputId);
  }

  private directoryOf(id: string): Promise<string> {
    return this.known.directory(id, () => this.getSession(id).then((s) => s.directory)).catch(() => this.directory ?? "");
  }

  // ------------------------------------------------------------------------------------------
  // Requests, models, catalogs

  listPending(sessionIds?: Iterable<string>) {
    return listPendingV2(this.client, sessionIds);
  }

  answerPermission(a: AnswerPermission) {
    return answerPermissionV2(this.client, a);
  }

  answerQuestion(a: AnswerQuestion) {
    return answerQuestionV2(this.client, a);
  }

  providerCatalog() {
    return v2ProviderCatalog(this.client);
  }

  async configuredModel(): Promise<string | undefined> {
    const model = dataOf<{ id?: string; providerID?: string } | undefined>(await this.client.request("model.default", {}).catch(() => ({ data: undefined })));
    return model?.id && model.providerID ? `${model.providerID}/${model.id}` : undefined;
  }

  catalog: Engine["catalog"] = (kind) => v2Catalog(this.client, kind);
}
