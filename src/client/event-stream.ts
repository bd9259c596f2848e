// An opencode event stream as an async iterator: `GET /global/event` (1.x) by default, any other
// framing (2.x `GET /api/event`) through a `parse` function. opencode sends only `data:` lines,
// a heartbeat every 10 s and no replay (docs/opencode-behaviour.md §2), so a silent stream is treated as dropped, and
// after a reconnect the consumer is told (`conductor.reconnected`) so it can re-read state.
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { AuthError, ConnectionError, OpencodeError } from "./errors.js";
import { noteSessionsNamed, sessionsNamedIn } from "./event-sessions.js";
import type { DisconnectedEvent, OpencodeEvent, ReconnectedEvent } from "./types.js";
import { sleep } from "./sleep.js";

export interface EventsOptions {
  signal?: AbortSignal;
  /** Reconnect when the stream drops (default true). */
  reconnect?: boolean;
  /** A stream silent this long (ms) is considered dead; opencode heartbeats every 10 s. Default 35 000. */
  idleTimeoutMs?: number;
  /** Longest wait between reconnect attempts (ms). Default 5 000. */
  maxBackoffMs?: number;
  /** Give up (throw) when the server stays unreachable this long (ms). Default 120 000. */
  giveUpAfterMs?: number;
  /**
   * Asked for each event that names sessions (event-sessions.ts), with its raw text, before it is
   * parsed: false drops it unparsed (nobody follows those sessions). Default: every event is parsed.
   */
  wanted?: (sessions: readonly string[], data: string) => boolean;
  /** Told each time the stream brings data (heartbeats included): it is live, whatever it carries. */
  onData?: () => void;
}

type OpenStream = (signal: AbortSignal) => Promise<ReadableStream<Uint8Array>>;

/** Turns one SSE message into an event, or undefined to drop it. Each API generation has its own framing. */
export type ParseEvent<E> = (message: EventSourceMessage) => E | undefined;

const SKIPPED = new Set(["sync", "server.heartbeat"]);

export function streamEvents(open: OpenStream, options?: EventsOptions): AsyncGenerator<OpencodeEvent | ReconnectedEvent | DisconnectedEvent>;
export function streamEvents<E extends { type: string }>(
  open: OpenStream,
  options: EventsOptions | undefined,
  parse: ParseEvent<E>,
): AsyncGenerator<E | ReconnectedEvent | DisconnectedEvent>;
export async function* streamEvents<E extends { type: string }>(
  open: OpenStream,
  options: EventsOptions = {},
  parse: ParseEvent<E> = parseMessage as unknown as ParseEvent<E>,
): AsyncGenerator<E | ReconnectedEvent | DisconnectedEvent> {
  const { signal, reconnect = true, idleTimeoutMs = 35_000, maxBackoffMs = 5_000, giveUpAfterMs = 120_000, wanted, onData } = options;
  let attempt = 0;
  let downSince: number | undefined;
  let connectedOnce = false;
  while (!signal?.aborted) {
    let dropped: string | undefined;
    const controller = new AbortController();
    const abort = () => controller.abort(signal?.reason);
    signal?.addEventListener("abort", abort, { once: true });
    try {
      const stream = await open(controller.signal);
      connectedOnce = true;
      for await (const event of readEvents(stream, controller, idleTimeoutMs, parse, wanted, onData)) {
        if (event.type === "server.connected" && downSince !== undefined) {
          // Subscribed again: now the consumer can re-read state without missing what follows.
          yield event;
          yield { type: "conductor.reconnected", properties: { attempt, downtimeMs: Date.now() - downSince } };
          downSince = undefined;
          attempt = 0;
          continue;
        }
        yield event;
      }
      // The silence limit ends the read as a close would: say which it was.
      const reason: unknown = controller.signal.aborted ? controller.signal.reason : undefined;
      dropped = reason instanceof Error ? reason.message : "the server closed the event stream";
    } catch (error) {
      if (signal?.aborted) return;
      // Wrong credentials or a bad request will not heal by retrying.
      if (error instanceof AuthError || (error instanceof OpencodeError && error.status >= 400 && error.status < 500)) throw error;
      // A server that never answered is reported at once; one that went away, after a while.
      if (!reconnect || !connectedOnce) throw error;
      if (downSince !== undefined && Date.now() - downSince > giveUpAfterMs) {
        throw new ConnectionError(
          `The opencode event stream has been down for ${Math.round((Date.now() - downSince) / 1000)} s; giving up.`,
          "unreachable",
          {},
          error,
        );
      }
      dropped = error instanceof Error ? error.message : String(error);
    } finally {
      signal?.removeEventListener("abort", abort);
      controller.abort();
    }
    if (!reconnect || signal?.aborted) return;
    // Said once per outage, so a consumer can check at once whether the server is still there.
    if (downSince === undefined && dropped !== undefined) yield { type: "conductor.disconnected", properties: { message: dropped } };
    downSince ??= Date.now();
    attempt++;
    await sleep(Math.min(maxBackoffMs, 100 * 2 ** (attempt - 1)), signal);
  }
}

async function* readEvents<E extends object>(
  stream: ReadableStream<Uint8Array>,
  controller: AbortController,
  idleTimeoutMs: number,
  parse: ParseEvent<E>,
  wanted: EventsOptions["wanted"],
  onData: EventsOptions["onData"],
): AsyncGenerator<E> {
  const pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (message) => pending.push(message) });
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let idleTimer: NodeJS.Timeout | undefined;
  // One timer per stream, pushed back on each chunk (refresh: no new timer per chunk; with many
  // sessions in flight a chunk comes every few milliseconds).
  const armIdle = () => {
    if (idleTimer) idleTimer.refresh();
    else idleTimer = setTimeout(() => controller.abort(new Error(`event stream silent for ${Math.round(idleTimeoutMs / 1000)} s`)), idleTimeoutMs);
  };
  const onAbort = () => void reader.cancel().catch(() => undefined);
  controller.signal.addEventListener("abort", onAbort, { once: true });
  try {
    armIdle();
    while (true) {
      const { value, done } = await reader.read();
      if (done) return;
      armIdle();
      onData?.();
      parser.feed(decoder.decode(value, { stream: true }));
      while (pending.length > 0) {
        const message = pending.shift()!;
        const sessions = sessionsNamedIn(message.data);
        // Events of sessions nobody follows are dropped before any parsing.
        if (wanted && sessions.length > 0 && !wanted(sessions, message.data)) continue;
        const event = parse(message);
        if (!event) continue;
        noteSessionsNamed(event, sessions);
        yield event;
      }
    }
  } finally {
    clearTimeout(idleTimer);
    controller.signal.removeEventListener("abort", onAbort);
    await reader.cancel().catch(() => undefined);
  }
}

/** 1.x framing of `GET /global/event`: `{directory, project, payload: {type, properties}}`. */
function parseMessage(message: EventSourceMessage): OpencodeEvent | undefined {
  let data: { directory?: string; project?: string; payload?: { type?: string } };
  try {
    data = JSON.parse(message.data);
  } catch {
    return undefined; // not JSON: nothing we can use
  }
  const payload = data.payload;
  if (!payload || typeof payload.type !== "string" || SKIPPED.has(payload.type)) return undefined;
  const event = { ...payload } as OpencodeEvent;
  withSessionId(event);
  if (data.directory !== undefined) event.directory = data.directory;
  if (data.project !== undefined) event.project = data.project;
  return event;
}

/**
 * Releases before 1.14 (1.1.65 and 1.3.2 seen) name the session of `message.updated`,
 * `message.part.updated` and `session.created|updated|deleted` only inside the message, part or
 * session, not as `properties.sessionID` as the pinned document declares (docs/opencode-behaviour.md §2):
 * take it from there, so every consumer reads one shape and no turn's end goes unseen.
 */
function withSessionId(event: OpencodeEvent): void {
  const properties = (event as { properties?: unknown }).properties as
    { sessionID?: unknown; info?: { id?: unknown; sessionID?: unknown }; part?: { sessionID?: unknown } } | undefined;
  if (!properties || typeof properties.sessionID === "string") return;
  const named =
    event.type === "message.updated"
      ? properties.info?.sessionID
      : event.type === "message.part.updated"
        ? properties.part?.sessionID
        : event.type === "session.created" || event.type === "session.updated" || event.type === "session.deleted"
          ? properties.info?.id
          : undefined;
  if (typeof named === "string") properties.sessionID = named;
}
