// The v2 engine: opencode 2.x through its v2 API (docs/opencode-2x-behaviour.md), every route by
// its adapter name (src/client/v2/routes.ts resolves it from the server's own spec, so the
// pre-release and 2.0.26 both work; a route the server lacks is a RouteMissingError naming the
// version). 2.x objects are mapped into the core's shapes (engine.ts says why). What 2.x cannot do
// is an UnsupportedOnEngineError that says what to do instead.
import { pathToFileURL } from "node:url";
import type { OpencodeV2Client } from "../../client/v2/client.js";
import type { V2Event } from "../../client/v2/events.js";
import type { OpencodeEvent } from "../../client/types.js";
import type { ModelRef } from "../catalog/model-resolve.js";
import type { AnswerPermission, AnswerQuestion } from "../policy/approvals.js";
import type { PermissionRule } from "../policy/permissions.js";
import { activityV2, recordedMessagesV2, V2_MACHINE_OPTIONS } from "../turns/v2-events.js";
import type { TurnMachineOptions } from "../turns/machine.js";
import {
  UnsupportedOnEngineError,
  type Engine,
  type EngineFileDiff,
  type EngineInfo,
  type EngineMessage,
  type EngineSession,
  type PromptInput,
  type RunState,
  type SessionTranslator,
  type TurnSnapshot,
} from "./engine.js";
import type { HubEvent } from "./events.js";
import { v2Catalog, v2ProviderCatalog } from "./v2-catalog.js";
import { messagesFromV2, type V2Message } from "./v2-messages.js";
import { answerPermissionV2, answerQuestionV2, listPendingV2 } from "./v2-requests.js";
import { V2Signals, V2Usage } from "./v2-signals.js";

/** Messages read to find the last turn; a longer turn reads them all. */
const TURN_PAGE = 50;
const ALL_PAGE = 200;

interface V2Session {
  id: string;
  title?: string;
  parentID?: string;
  location?: { directory?: string };
  time?: { created?: number; updated?: number };
  cost?: number;
  tokens?: { input?: number; output?: number; reasoning?: number; cache?: { read?: number; write?: number } };
  revert?: { messageID?: string };
}

interface Page<T> {
  data?: T[];
  cursor?: { previous?: string | null; next?: string | null };
}

const dataOf = <T>(response: unknown): T => (response as { data: T }).data;

export function sessionOfV2(s: V2Session): EngineSession {
  const t = s.tokens;
  return {
    id: s.id,
    title: s.title ?? "",
    directory: s.location?.directory ?? "",
    ...(s.parentID ? { parentId: s.parentID } : {}),
    time: { created: s.time?.created ?? 0, updated: s.time?.updated ?? s.time?.created ?? 0 },
    ...(s.cost !== undefined ? { cost: s.cost } : {}),
    ...(t
      ? { tokens: { input: t.input ?? 0, output: t.output ?? 0, reasoning: t.reasoning ?? 0, cacheRead: t.cache?.read ?? 0, cacheWrite: t.cache?.write ?? 0 } }
      : {}),
    ...(s.revert?.messageID ? { revert: { messageId: s.revert.messageID } } : {}),
  };
}

/** 1.x session rules as 2.x permission rules (`{action, resource, effect}`; 1.x `bash` is 2.x `shell`). */
function rulesV2(rules: PermissionRule[]) {
  return rules.map((r) => ({ action: r.permission === "bash" ? "shell" : r.permission, resource: r.pattern, effect: r.action }));
}

const modelRefV2 = (m: ModelRef) => ({ id: m.modelID, providerID: m.providerID, ...(m.variant ? { variant: m.variant } : {}) });

export class V2Engine implements Engine {
  constructor(
    readonly client: OpencodeV2Client,
    readonly directory: string | undefined,
    private readonly spec?: { version: string; sha256: string; doc: unknown },
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
    return directory === this.directory ? this : new V2Engine(this.client, directory, this.spec);
  }

  async capabilities() {
    const create = this.client.routes.get("session.create").bodyProperties;
    return { nativeSteer: true, sessionRules: create.includes("permissions"), deleteMessages: false, compactNeedsModel: false };
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

  async *events(options: { signal: AbortSignal }): AsyncGenerator<HubEvent> {
    for await (const event of this.client.events(options)) {
      if (event.type === "conductor.reconnected" || event.type === "conductor.disconnected") yield event as HubEvent;
      else if (event.type === "server.connected") yield { type: "server.connected", properties: {} } as OpencodeEvent;
      else yield { type: "v2.event", properties: event as V2Event };
    }
  }

  async watchKit(sessionId: string): Promise<{ machine: TurnMachineOptions; translator: SessionTranslator }> {
    return { machine: V2_MACHINE_OPTIONS, translator: new V2Signals(sessionId) };
  }

  async usageTranslator() {
    return new V2Usage();
  }

  private unsupported(what: string, instead?: string): never {
    throw new UnsupportedOnEngineError(what, this.version, instead);
  }

  // ------------------------------------------------------------------------------------------
  // Sessions

  async createSession(o: { title: string; rules?: PermissionRule[] }): Promise<EngineSession> {
    const accepts = this.client.routes.get("session.create").bodyProperties;
    if (o.rules && !accepts.includes("permissions")) {
      this.unsupported("set permission rules per session", "its API has none. Set `permission` in the server's opencode.json, or leave `permissions` unset");
    }
    const body = {
      title: o.title,
      ...(this.directory && accepts.includes("location") ? { location: { directory: this.directory } } : {}),
      ...(o.rules ? { permissions: rulesV2(o.rules) } : {}),
    };
    return sessionOfV2(dataOf<V2Session>(await this.client.request("session.create", { body })));
  }

  async getSession(id: string): Promise<EngineSession> {
    return sessionOfV2(dataOf<V2Session>(await this.client.request("session.get", { path: { sessionID: id } })));
  }

  async listSessions(o: { limit: number; search?: string }): Promise<EngineSession[]> {
    const page = (await this.client.request("session.list", {
      query: { limit: String(o.limit), ...(o.search ? { search: o.search } : {}) },
    })) as Page<V2Session>;
    return (page.data ?? []).map(sessionOfV2);
  }

  async childSessions(id: string): Promise<EngineSession[]> {
    const page = (await this.client.request("session.list", { query: { parentID: id } })) as Page<V2Session>;
    return (page.data ?? []).map(sessionOfV2);
  }

  async setRules(id: string, rules: PermissionRule[]): Promise<void> {
    const route = this.client.routes.get("session.rename");
    if (!route.bodyProperties.includes("permissions")) {
      this.unsupported("change a session's permission rules", "its API has none. Set `permission` in the server's opencode.json, or leave `permissions` unset");
    }
    await this.client.request("session.rename", { path: { sessionID: id }, body: { permissions: rulesV2(rules) } });
  }

  async rename(id: string, title: string): Promise<EngineSession> {
    await this.client.request("session.rename", { path: { sessionID: id }, body: { title } });
    return this.getSession(id);
  }

  archive(): Promise<EngineSession> {
    this.unsupported("archive a session", "2.x has no archive; delete the session instead (oc_session delete)");
  }

  async remove(id: string): Promise<boolean> {
    await this.client.request("session.remove", { path: { sessionID: id } });
    return true;
  }

  async fork(id: string, o: { messageId?: string }): Promise<EngineSession> {
    const takesBoundary = this.client.routes.get("session.fork").bodyProperties.includes("boundary");
    const body = takesBoundary
      ? { boundary: o.messageId ? { type: "before", messageID: o.messageId } : { type: "through" } }
      : o.messageId
        ? { before: o.messageId }
        : {};
    return sessionOfV2(dataOf<V2Session>(await this.client.request("session.fork", { path: { sessionID: id }, body })));
  }

  async revert(id: string, o: { messageId: string; partId?: string }): Promise<EngineSession> {
    if (o.partId) this.unsupported("revert to a part of a message", "revert to the whole message (leave partId out)");
    await this.client.request("session.revert.stage", { path: { sessionID: id }, body: { messageID: o.messageId } });
    return this.getSession(id);
  }

  async unrevert(id: string): Promise<EngineSession> {
    await this.client.request("session.revert.clear", { path: { sessionID: id } });
    return this.getSession(id);
  }

  /** 2.x compacts as an execution of its own (with the session's model); wait for it to end. */
  async compact(id: string, o: { timeoutMs: number }): Promise<boolean> {
    await this.client.request("session.compact", { path: { sessionID: id }, body: {} });
    await this.client.request("session.wait", { path: { sessionID: id } }, { timeoutMs: o.timeoutMs });
    return true;
  }

  shell(): Promise<EngineMessage> {
    this.unsupported("run a shell command outside a turn through the conductor", "ask the agent to run it (oc_delegate / oc_send)");
  }

  todo(): Promise<never> {
    this.unsupported("list a session's todo items", "2.x has no todo route");
  }

  // ------------------------------------------------------------------------------------------
  // Turns

  async prompt(id: string, input: PromptInput): Promise<void> {
    const path = { sessionID: id };
    // 2.x keeps the model and agent on the session: switch first, then prompt.
    if (input.model) await this.client.request("session.switchModel", { path, body: { model: modelRefV2(input.model) } });
    if (input.agent) await this.client.request("session.switchAgent", { path, body: { agent: input.agent } });
    const files = (input.files ?? []).map((f) => ({ uri: pathToFileURL(f.path).href, name: f.name }));
    if (input.command) {
      const body = {
        command: input.command,
        arguments: input.text,
        ...(input.agent ? { agent: input.agent } : {}),
        ...(input.model ? { model: modelRefV2(input.model) } : {}),
      };
      await this.client.request("session.command", { path, body });
      return;
    }
    const body = {
      text: input.text,
      ...(input.delivery ? { delivery: input.delivery } : {}),
      ...(files.length > 0 ? { files } : {}),
      ...(input.agents?.length ? { agents: input.agents.map((name) => ({ name })) } : {}),
    };
    await this.client.request("session.prompt", { path, body });
  }

  async abort(id: string): Promise<void> {
    await this.client.request("session.interrupt", { path: { sessionID: id } });
  }

  async runState(id: string): Promise<RunState> {
    // 2.x has no retry state to read: a session waiting to retry is `running`.
    return { type: activityV2(await this.client.request("session.active", {}), id) === "busy" ? "busy" : "idle" };
  }

  async snapshot(id: string): Promise<TurnSnapshot> {
    const [active, raw] = await Promise.all([this.client.request("session.active", {}), this.lastTurnRaw(id)]);
    const directory = await this.directoryOf(id);
    return { activity: activityV2(active, id), records: recordedMessagesV2(raw), messages: messagesFromV2(raw, id, directory) };
  }

  async lastTurn(id: string): Promise<EngineMessage[]> {
    const [raw, directory] = await Promise.all([this.lastTurnRaw(id), this.directoryOf(id)]);
    return messagesFromV2(raw, id, directory);
  }

  async newestMessageId(id: string): Promise<string | undefined> {
    const page = (await this.client.request("session.messages", { path: { sessionID: id }, query: { limit: "1" } })) as Page<V2Message>;
    return page.data?.[0]?.id;
  }

  async messages(id: string): Promise<EngineMessage[]> {
    const [raw, directory] = await Promise.all([this.allRaw(id), this.directoryOf(id)]);
    return messagesFromV2(raw, id, directory);
  }

  async messagesPage(id: string, o: { limit: number; before?: string }): Promise<{ messages: EngineMessage[]; nextBefore?: string }> {
    const query = { limit: String(o.limit), ...(o.before ? { cursor: o.before } : {}) };
    const [page, directory] = await Promise.all([
      this.client.request("session.messages", { path: { sessionID: id }, query }) as Promise<Page<V2Message>>,
      this.directoryOf(id),
    ]);
    const data = [...(page.data ?? [])].reverse(); // the server lists newest first
    const next = page.cursor?.next;
    return { messages: messagesFromV2(data, id, directory), ...(next && data.length === o.limit ? { nextBefore: next } : {}) };
  }

  async deleteMessage(): Promise<boolean> {
    return false; // 2.x has no route to delete a message: a fallback asks the next model to continue
  }

  /**
   * 2.x records the files each step changed (`snapshot.files`); the pre-release has no per-session
   * diff with line counts, so the turn's files come without them (no made-up zeros).
   */
  async turnDiff(id: string, messageId: string): Promise<EngineFileDiff[]> {
    const raw = await this.allRaw(id);
    const start = raw.findIndex((m) => m.id === messageId);
    if (start < 0) return [];
    const files = new Set<string>();
    for (const m of raw.slice(start + 1)) {
      if (m.type === "user") break;
      for (const f of m.snapshot?.files ?? []) files.add(f);
    }
    return [...files].sort().map((file) => ({ file }) as unknown as EngineFileDiff);
  }

  private async lastTurnRaw(id: string): Promise<V2Message[]> {
    const page = (await this.client.request("session.messages", { path: { sessionID: id }, query: { limit: String(TURN_PAGE) } })) as Page<V2Message>;
    const data = [...(page.data ?? [])].reverse();
    if (data.length < TURN_PAGE || data.some((m) => m.type === "user")) return data;
    return this.allRaw(id);
  }

  private async allRaw(id: string): Promise<V2Message[]> {
    const out: V2Message[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 1000; i++) {
      const query = { order: "asc", limit: String(ALL_PAGE), ...(cursor ? { cursor } : {}) };
      const page = (await this.client.request("session.messages", { path: { sessionID: id }, query })) as Page<V2Message>;
      const data = page.data ?? [];
      out.push(...data);
      cursor = page.cursor?.next ?? undefined;
      if (data.length < ALL_PAGE || !cursor) break;
    }
    return out;
  }

  private readonly directories = new Map<string, Promise<string>>();

  private directoryOf(id: string): Promise<string> {
    let known = this.directories.get(id);
    if (!known) {
      known = this.getSession(id).then(
        (s) => s.directory,
        () => this.directory ?? "",
      );
      this.directories.set(id, known);
    }
    return known;
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
