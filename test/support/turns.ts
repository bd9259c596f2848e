// Waiting for opencode turns in tests, from the event stream only (never sleeps or polls):
// subscribe, wait for `server.connected`, then prompt, then wait for the session's `session.idle`
// (docs/opencode-behaviour.md §2: prompt_async answers 204 before the session turns busy, so subscribing later races).
import type { OpencodeClient } from "../../src/client/connect.js";
import type { OpencodeEvent } from "../../src/client/types.js";

export const SCRIPTED_MODEL = { providerID: "fake", modelID: "scripted" } as const;

type Model = { providerID: string; modelID: string };

/** The session an event belongs to: every session-scoped event carries `properties.sessionID`. */
export function sessionOf(event: OpencodeEvent): string | undefined {
  const id = (event as { properties?: { sessionID?: unknown } }).properties?.sessionID;
  return typeof id === "string" ? id : undefined;
}

export interface SessionWatch {
  /** Events of the session seen so far, in order. */
  readonly events: OpencodeEvent[];
  /** The first event of the session (already seen or still to come) that `match` accepts. */
  waitFor<E extends OpencodeEvent>(what: string, match: (event: OpencodeEvent) => event is E, options?: { timeoutMs?: number }): Promise<E>;
  waitFor(what: string, match: (event: OpencodeEvent) => boolean, options?: { timeoutMs?: number }): Promise<OpencodeEvent>;
  /** Waits for `session.idle` of the session; resolves with the events collected so far. */
  idle(options?: { timeoutMs?: number }): Promise<OpencodeEvent[]>;
  close(): void;
}

const DEFAULT_TIMEOUT_MS = 90_000;

/** Subscribes to the event stream and resolves once it is live (`server.connected` arrived). */
export async function watchSession(client: OpencodeClient, sessionId: string, options: { timeoutMs?: number } = {}): Promise<SessionWatch> {
  const controller = new AbortController();
  const events: OpencodeEvent[] = [];
  const listeners = new Set<() => void>();
  let failure: unknown;
  let connected!: () => void;
  const live = new Promise<void>((resolve) => (connected = resolve));
  const notify = () => listeners.forEach((listener) => listener());

  const reading = (async () => {
    for await (const event of client.events({ signal: controller.signal })) {
      if (event.type === "conductor.reconnected" || event.type === "conductor.disconnected") {
        // Events were lost while the stream was down: a wait could miss its event, so say so.
        failure = new Error(`event stream ${event.type === "conductor.disconnected" ? "dropped" : "reconnected"}; events may be lost`);
      } else if (event.type === "server.connected") {
        connected();
      } else if (sessionOf(event) === sessionId) {
        events.push(event);
      }
      notify();
    }
  })().catch((error: unknown) => {
    if (!controller.signal.aborted) failure = error;
    notify();
  });

  const waitFor = (what: string, match: (event: OpencodeEvent) => boolean, waitOptions: { timeoutMs?: number } = {}) =>
    new Promise<OpencodeEvent>((resolve, reject) => {
      const timeoutMs = waitOptions.timeoutMs ?? options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      const check = () => {
        const hit = events.find(match);
        if (hit) finish(() => resolve(hit));
        else if (failure) finish(() => reject(failure));
      };
      const timer = setTimeout(
        () => finish(() => reject(new Error(`no ${what} for ${sessionId} within ${timeoutMs} ms; saw: ${events.map((e) => e.type).join(", ") || "nothing"}`))),
        timeoutMs,
      );
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        listeners.delete(check);
        settle();
      };
      listeners.add(check);
      check();
    });

  const watch: SessionWatch = {
    events,
    waitFor: waitFor as SessionWatch["waitFor"],
    idle: async (waitOptions) => {
      await waitFor("session.idle", (e) => e.type === "session.idle", waitOptions);
      return [...events];
    },
    close: () => controller.abort(),
  };

  const timeoutMs = options.timeoutMs ?? 30_000;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      live,
      reading.then(() => Promise.reject(failure ?? new Error("event stream ended before server.connected"))),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no server.connected within ${timeoutMs} ms`)), timeoutMs))),
    ]);
  } catch (error) {
    watch.close();
    throw error;
  } finally {
    clearTimeout(timer);
  }
  return watch;
}

/**
 * Subscribes, runs `start` (e.g. the prompt) once the stream is live, and resolves with the
 * session's events at its `session.idle`.
 */
export async function waitForIdle(
  client: OpencodeClient,
  sessionId: string,
  options: { timeoutMs?: number; start?: () => Promise<unknown> } = {},
): Promise<OpencodeEvent[]> {
  const watch = await watchSession(client, sessionId, options);
  try {
    await options.start?.();
    return await watch.idle(options);
  } finally {
    watch.close();
  }
}

/** `session.prompt_async` with the scripted model (explicitly: the model is sticky, docs/opencode-behaviour.md §6). */
export async function prompt(client: OpencodeClient, sessionId: string, text: string, model: Model = SCRIPTED_MODEL): Promise<void> {
  await client.call("session.prompt_async", { path: { sessionID: sessionId }, body: { model, parts: [{ type: "text", text }] } });
}

export type SessionMessages = Awaited<ReturnType<typeof readMessages>>;

export interface TurnResult {
  events: OpencodeEvent[];
  messages: SessionMessages;
  /** Text of the last assistant message. */
  answer: string;
}

export function readMessages(client: OpencodeClient, sessionId: string) {
  return client.call("session.messages", { path: { sessionID: sessionId } });
}

/** Text of the last assistant message (its text parts joined). */
export function lastAnswer(messages: SessionMessages): string {
  const last = lastAssistant(messages);
  return (last?.parts ?? []).flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
}

/** Prompts a session and waits for the turn to end; returns its events, messages and answer. */
export async function promptAndWait(
  client: OpencodeClient,
  sessionId: string,
  text: string,
  options: { timeoutMs?: number; model?: Model } = {},
): Promise<TurnResult> {
  const events = await waitForIdle(client, sessionId, { ...options, start: () => prompt(client, sessionId, text, options.model) });
  const messages = await readMessages(client, sessionId);
  return { events, messages, answer: lastAnswer(messages) };
}

/** A session with a title (else opencode first sends a title request to the model, docs/opencode-behaviour.md §0.3). */
export async function createSession(client: OpencodeClient, title: string) {
  return client.call("session.create", { body: { title } });
}

/** The last assistant message of a turn. */
export function lastAssistant(messages: SessionMessages) {
  return [...messages].reverse().find((m) => m.info.role === "assistant");
}
