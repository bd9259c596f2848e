// The v1 engine: opencode 1.x through its v1 API (docs/opencode-behaviour.md). A thin wrapper: the
// core's data shapes are 1.x's own, so most methods pass opencode's objects on. Status and pending
// requests are kept per directory instance (§9): `withDirectory` binds the engine to a project.
// Beside it: v1-session.ts (a 1.x session in the core's shape), v1-history.ts (a page of older
// messages), v1-catalog.ts (catalog rows), v1-signals.ts (events read for a turn).
import type { Message } from "../../model/message.js";
import type { Session, SessionRunState } from "../../model/session.js";
import { pathToFileURL } from "node:url";
import type { OpencodeClient } from "../../../client/connect.js";
import type { Schemas } from "../../../client/types.js";
import { answerPermission, answerQuestion, listPending } from "./v1-requests.js";
import type { PermissionRule } from "../../policy/permissions.js";
import type { TurnMachineOptions } from "../../model/turn-event.js";
import { V1TurnEvents } from "./v1-events.js";
import { continuesTurn, evidenceOf } from "../../model/evidence.js";
import {
  UnsupportedOnEngineError,
  type Engine,
  type EngineEventsOptions,
  type EngineInfo,
  type NewSession,
  type PromptInput,
  type SessionTranslator,
  type TurnSnapshot,
  type WaitingPrompt,
} from "../engine.js";
import { v1Catalog } from "./v1-catalog.js";
import { messagesPageV1 } from "./v1-history.js";
import { sessionOfV1 } from "./v1-session.js";
import { V1Signals, V1Usage } from "./v1-signals.js";
import { waitingPromptV1 } from "./v1-waiting.js";

/** Messages read to find the last turn; a longer turn falls back to reading all. */
const TURN_PAGE = 50;
/** The command route answers only when its turn ends. */
const COMMAND_TIMEOUT_MS = 24 * 3600_000;
const MACHINE: TurnMachineOptions = {};
const CAPABILITIES = { nativeSteer: false, sessionRules: true, deleteMessages: true, compactNeedsModel: true, turnDiffLines: true };

export class V1Engine implements Engine {
  private infoCache: Promise<EngineInfo> | undefined;

  constructor(
    /** The typed 1.x client (oc_api, feature detection and instances use it directly). */
    readonly client: OpencodeClient,
    private readonly knownVersion?: string,
  ) {}

  get url(): string {
    return this.client.url;
  }

  get directory(): string | undefined {
    return this.client.directory;
  }

  withDirectory(directory: string | undefined): V1Engine {
    return directory === this.client.directory ? this : new V1Engine(this.client.withDirectory(directory), this.knownVersion);
  }

  async capabilities() {
    return CAPABILITIES;
  }

  info(): Promise<EngineInfo> {
    this.infoCache ??= (this.knownVersion ? Promise.resolve(this.knownVersion) : this.health().then((h) => h.version)).then(
      (version) => ({ kind: "v1", version, capabilities: CAPABILITIES }),
      (error: unknown) => {
        this.infoCache = undefined;
        throw error;
      },
    );
    return this.infoCache;
  }

  async openApi() {
    return undefined;
  }

  health(timeoutMs?: number): Promise<{ healthy: boolean; version: string }> {
    return this.client.call("global.health", {}, timeoutMs ? { timeoutMs } : {});
  }

  events(options: EngineEventsOptions) {
    return this.client.events(options);
  }

  async watchKit(sessionId: string): Promise<{ machine: TurnMachineOptions; translator: SessionTranslator }> {
    return { machine: MACHINE, translator: new V1Signals(new V1TurnEvents(sessionId)) };
  }

  async usageTranslator() {
    return new V1Usage();
  }

  // ------------------------------------------------------------------------------------------
  // Sessions

  /** 1.x keeps no model or agent a prompt must switch: each prompt names its own. */
  async createSession(o: NewSession): Promise<Session> {
    return sessionOfV1(await this.client.call("session.create", { body: { title: o.title, ...(o.rules ? { permission: o.rules } : {}) } }));
  }

  async getSession(id: string): Promise<Session> {
    return sessionOfV1(await this.client.call("session.get", { path: { sessionID: id } }));
  }

  async listSessions(o: { limit: number; search?: string }): Promise<Session[]> {
    return (await this.client.call("session.list", { query: { limit: o.limit, ...(o.search ? { search: o.search } : {}) } })).map(sessionOfV1);
  }

  async childSessions(id: string): Promise<Session[]> {
    return (await this.client.call("session.children", { path: { sessionID: id } })).map(sessionOfV1);
  }

  async setRules(id: string, rules: PermissionRule[]): Promise<void> {
    await this.client.call("session.update", { path: { sessionID: id }, body: { permission: rules } });
  }

  async rename(id: string, title: string): Promise<Session> {
    return sessionOfV1(await this.client.call("session.update", { path: { sessionID: id }, body: { title } }));
  }

  async archive(id: string): Promise<Session> {
    return sessionOfV1(await this.client.call("session.update", { path: { sessionID: id }, body: { time: { archived: Date.now() } } }));
  }

  remove(id: string): Promise<boolean> {
    return this.client.call("session.delete", { path: { sessionID: id } });
  }

  async fork(id: string, o: { messageId?: string }): Promise<Session> {
    return sessionOfV1(await this.client.call("session.fork", { path: { sessionID: id }, body: o.messageId ? { messageID: o.messageId } : {} }));
  }

  async revert(id: string, o: { messageId: string; partId?: string }): Promise<Session> {
    return sessionOfV1(
      await this.client.call("session.revert", { path: { sessionID: id }, body: { messageID: o.messageId, ...(o.partId ? { partID: o.partId } : {}) } }),
    );
  }

  async unrevert(id: string): Promise<Session> {
    return sessionOfV1(await this.client.call("session.unrevert", { path: { sessionID: id } }));
  }

  compact(id: string, o: { model?: { providerID: string; modelID: string }; timeoutMs: number }): Promise<boolean> {
    if (!o.model) throw new Error("the v1 engine compacts with an explicit model");
    return this.client.call(
      "session.summarize",
      { path: { sessionID: id }, body: { providerID: o.model.providerID, modelID: o.model.modelID } },
      { timeoutMs: o.timeoutMs },
    );
  }

  shell(id: string, o: { command: string; agent: string; model?: { providerID: string; modelID: string }; timeoutMs: number }): Promise<Message> {
    const body = { command: o.command, agent: o.agent, ...(o.model ? { model: { providerID: o.model.providerID, modelID: o.model.modelID } } : {}) };
    return this.client.call("session.shell", { path: { sessionID: id }, body }, { timeoutMs: o.timeoutMs });
  }

  todo(id: string): Promise<Schemas["Todo"][]> {
    return this.client.call("session.todo", { path: { sessionID: id } });
  }

  // ------------------------------------------------------------------------------------------
  // Turns

  async checkPrompt(): Promise<void> {
    // 1.x sends every attachment on to the model as a file part.
  }

  async prompt(id: string, input: PromptInput, onLateFailure: (error: unknown) => void): Promise<void> {
    const m = input.model;
    const files = (input.files ?? []).map((f) => ({ type: "file" as const, mime: f.mime, url: pathToFileURL(f.path).href, filename: f.name }));
    if (input.command) {
      // The command route answers only when the turn ends: do not hold the caller on it.
      const body = {
        command: input.command,
        arguments: input.text,
        ...(input.agent ? { agent: input.agent } : {}),
        ...(m ? { model: `${m.providerID}/${m.modelID}`, ...(m.variant ? { variant: m.variant } : {}) } : {}),
        ...(files.length > 0 ? { parts: files } : {}),
      };
      this.client.call("session.command", { path: { sessionID: id }, body }, { timeoutMs: COMMAND_TIMEOUT_MS }).catch(onLateFailure);
      return;
    }
    const parts: Array<Schemas["TextPartInput"] | Schemas["FilePartInput"] | Schemas["AgentPartInput"]> = [{ type: "text", text: input.text }, ...files];
    for (const name of input.agents ?? []) parts.push({ type: "agent", name });
    const body = {
      parts,
      ...(m ? { model: { providerID: m.providerID, modelID: m.modelID } } : {}),
      ...(m?.variant ? { variant: m.variant } : {}),
      ...(input.agent ? { agent: input.agent } : {}),
    };
    await this.client.call("session.prompt_async", { path: { sessionID: id }, body });
  }

  async abort(id: string): Promise<void> {
    await this.client.call("session.abort", { path: { sessionID: id } });
  }

  async waitingPrompt(id: string, sent: { after?: string }): Promise<WaitingPrompt | undefined> {
    const state = await this.runState(id);
    return waitingPromptV1(state, state.type === "idle" ? [] : await this.messages(id), sent.after);
  }

  async withdrawPrompt(): Promise<void> {
    const version = (await this.info()).version;
    throw new UnsupportedOnEngineError(
      "take back a prompt queued behind the running turn",
      version,
      "1.x records it at once and keeps no queue to remove it from",
    );
  }

  async runState(id: string): Promise<SessionRunState> {
    // `session.status` lists only the non-idle sessions of one directory instance.
    return (await this.client.call("session.status"))[id] ?? { type: "idle" };
  }

  async snapshot(id: string): Promise<TurnSnapshot> {
    const [state, messages] = await Promise.all([this.runState(id), this.lastTurn(id)]);
    return {
      activity: state.type,
      ...(state.type === "retry" ? { retry: { attempt: state.attempt, message: state.message, next: state.next } } : {}),
      records: messages.map(evidenceOf),
      messages,
    };
  }

  async lastTurn(id: string): Promise<Message[]> {
    const page = await this.client.call("session.messages", { path: { sessionID: id }, query: { limit: TURN_PAGE } });
    // A page that holds the last prompt (a message opencode added to carry a turn on is none: the turn started before it).
    if (page.length < TURN_PAGE || page.some((m) => m.info.role === "user" && !m.parts.some(continuesTurn))) return page;
    return this.messages(id);
  }

  async newestMessageId(id: string): Promise<string | undefined> {
    const page = await this.client.call("session.messages", { path: { sessionID: id }, query: { limit: 1 } });
    return page.at(-1)?.info.id;
  }

  messages(id: string): Promise<Message[]> {
    return this.client.call("session.messages", { path: { sessionID: id } });
  }

  /** One page of messages before the opaque cursor `before` (v1-history.ts: the cursor is in a header). */
  messagesPage(sessionID: string, o: { limit: number; before?: string }): Promise<{ messages: Message[]; nextBefore?: string }> {
    return messagesPageV1(this.client, sessionID, o);
  }

  deleteMessage(id: string, messageId: string): Promise<boolean> {
    return this.client.call("session.deleteMessage", { path: { sessionID: id, messageID: messageId } });
  }

  turnDiff(id: string, messageId: string): Promise<Schemas["SnapshotFileDiff"][]> {
    return this.client.call("session.diff", { path: { sessionID: id }, query: { messageID: messageId } });
  }

  // ------------------------------------------------------------------------------------------
  // Requests, models, catalogs

  listPending(sessionIds?: Iterable<string>) {
    return listPending(this.client, sessionIds);
  }

  answerPermission(a: Parameters<typeof answerPermission>[1]) {
    return answerPermission(this.client, a);
  }

  answerQuestion(a: Parameters<typeof answerQuestion>[1]) {
    return answerQuestion(this.client, a);
  }

  providerCatalog() {
    return this.client.call("config.providers", {});
  }

  async configuredModel(): Promise<string | undefined> {
    return (await this.client.call("config.get", {})).model;
  }

  catalog: Engine["catalog"] = (kind) => v1Catalog(this.client, kind);
}
