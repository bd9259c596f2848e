// Replays a recorded fixture with msw: each request gets the next recorded interaction with the
// same method, path and query. Event streams are replayed chunk by chunk without the recorded
// delays, but causally: an event is held back until the requests recorded before it have been
// made (so `session.idle` never arrives before the prompt), for at most `maxEventWaitMs`.
// A request the fixture does not hold fails the test, naming its method and path.
import { http, HttpResponse, type HttpHandler } from "msw";
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { connect, type OpencodeClient } from "../../src/client/index.js";
import { loadFixture, type Fixture, type Interaction } from "./fixture.js";

/** Base URL replay clients connect to; `.invalid` never resolves, so nothing can leak to a network. */
export const REPLAY_URL = "http://opencode.replay.invalid";
/** The project directory recordings were scrubbed to. */
export const REPLAY_DIRECTORY = "/project";

export interface ReplayOptions {
  baseUrl?: string;
  /** Requests the fixture could not answer are appended here as "METHOD /path?query". */
  unrecorded?: string[];
  /** Longest an event waits for the requests recorded before it. Default 1000 ms. */
  maxEventWaitMs?: number;
}

const keyOf = (method: string, path: string, query: Record<string, string>) =>
  `${method.toUpperCase()} ${path}?${new URLSearchParams(Object.entries(query).sort(([a], [b]) => a.localeCompare(b))).toString()}`;

export function replayHandlers(fixture: Fixture, options: ReplayOptions = {}): HttpHandler[] {
  const baseUrl = (options.baseUrl ?? REPLAY_URL).replace(/\/+$/, "");
  const unrecorded = options.unrecorded ?? [];
  const maxEventWaitMs = options.maxEventWaitMs ?? 1_000;
  const queues = new Map<string, Interaction[]>();
  for (const interaction of fixture.interactions) {
    const key = keyOf(interaction.method, interaction.path, interaction.query);
    queues.set(key, [...(queues.get(key) ?? []), interaction]);
  }
  // Interactions served so far (or given up on by a timed-out event), and who waits for more.
  const done = new Set<Interaction>();
  const waiters = new Set<() => void>();
  const markDone = (interaction: Interaction) => {
    done.add(interaction);
    waiters.forEach((wake) => wake());
  };
  const blockersOf = (atMs: number) => fixture.interactions.filter((i) => i.atMs < atMs && !done.has(i));

  /** Resolves once every request recorded before `atMs` was made, or after maxEventWaitMs. */
  const causal = (atMs: number, signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        waiters.delete(check);
        signal.removeEventListener("abort", finish);
        resolve();
      };
      const check = () => {
        if (blockersOf(atMs).length === 0) finish();
      };
      const timer = setTimeout(() => {
        blockersOf(atMs).forEach((i) => done.add(i)); // the test went another way: stop waiting for these
        finish();
      }, maxEventWaitMs);
      waiters.add(check);
      signal.addEventListener("abort", finish, { once: true });
      check();
    });

  const eventStream = (interaction: Interaction, requestSignal: AbortSignal) => {
    const encoder = new TextEncoder();
    const stop = new AbortController();
    requestSignal.addEventListener("abort", () => stop.abort(), { once: true });
    const events = interaction.events ?? [];
    let next = 0;
    return new ReadableStream<Uint8Array>({
      async pull(controller) {
        const event = events[next++];
        if (!event) {
          // Like opencode, the stream stays open after the last event until the client leaves:
          // closing it would make the client reconnect with a request the fixture does not hold.
          await new Promise<void>((resolve) => stop.signal.addEventListener("abort", () => resolve(), { once: true }));
          return;
        }
        await causal(interaction.atMs + event.atMs, stop.signal);
        if (stop.signal.aborted) return;
        const data = typeof event.data === "string" ? event.data : JSON.stringify(event.data);
        controller.enqueue(encoder.encode(`data: ${data}\n\n`));
      },
      cancel: () => stop.abort(),
    });
  };

  const handler = http.all(`${baseUrl}/*`, ({ request }) => {
    const url = new URL(request.url);
    const interaction = queues.get(keyOf(request.method, url.pathname, Object.fromEntries(url.searchParams)))?.shift();
    if (!interaction) {
      const what = `${request.method} ${url.pathname}${url.search ? decodeURIComponent(url.search) : ""}`;
      unrecorded.push(what);
      const message = `the replayed fixture "${fixture.scenario}" holds no (more) ${what}`;
      return HttpResponse.json({ name: "UnrecordedRequest", data: { message } }, { status: 501 });
    }
    markDone(interaction);
    const headers = interaction.contentType ? { "content-type": interaction.contentType } : undefined;
    if (interaction.events) {
      return new HttpResponse(eventStream(interaction, request.signal), { status: interaction.status, headers });
    }
    if (interaction.body === undefined) return new HttpResponse(null, { status: interaction.status, headers });
    const isJson = (interaction.contentType ?? "").includes("json");
    const body = isJson || typeof interaction.body !== "string" ? JSON.stringify(interaction.body) : interaction.body;
    return new HttpResponse(body, { status: interaction.status, headers });
  });
  return [handler];
}

export interface Replay {
  fixture: Fixture;
  baseUrl: string;
  directory: string;
  /** Requests of the current test the fixture could not answer; a non-empty list fails the test. */
  unrecorded: string[];
  /** A client for the replay (no password: headers are not recorded or checked). */
  connect(): OpencodeClient;
}

/**
 * msw replay of one fixture for the tests of the calling file (or describe block): every test
 * starts from the fixture's first interaction; requests to other hosts are errors
 * (`onUnhandledRequest: "error"`), and requests the fixture does not hold fail the test.
 */
export function useReplay(name: string, options: Omit<ReplayOptions, "unrecorded"> = {}): Replay {
  const fixture = loadFixture(name);
  const baseUrl = options.baseUrl ?? REPLAY_URL;
  const unrecorded: string[] = [];
  const server = setupServer();
  beforeAll(() => server.listen({ onUnhandledRequest: "error" }));
  beforeEach(() => {
    unrecorded.length = 0;
    server.resetHandlers(...replayHandlers(fixture, { ...options, baseUrl, unrecorded }));
  });
  afterEach(() => {
    if (unrecorded.length) throw new Error(`requests not in the fixture "${name}": ${unrecorded.join(", ")}`);
  });
  afterAll(() => server.close());
  return { fixture, baseUrl, directory: REPLAY_DIRECTORY, unrecorded, connect: () => connect({ url: baseUrl, directory: REPLAY_DIRECTORY }) };
}
