// The one fake opencode of the unit tests: msw handlers, one per operation of the generated
// operation table, that answer from a recorded fixture (`npm run record`). Nothing here invents a
// response: each request gets the next recorded interaction of its operation with the same path
// and query. Event streams are replayed chunk by chunk without the recorded delays, but causally:
// an event is held back until the requests recorded before it have been made (so `session.idle`
// never arrives before the prompt), for at most `maxEventWaitMs`. A request the fixture does not
// hold is answered 501 and listed in `unrecorded`, naming its method and path.
import { http, HttpResponse, type HttpHandler } from "msw";
import { operations, type HttpMethod } from "../../generated/operations.js";
import type { Fixture, Interaction } from "./fixture.js";
import { operationFor, routeMatcher } from "./operation-match.js";

/** Base URL fake clients connect to; `.invalid` never resolves, so nothing can leak to a network. */
export const REPLAY_URL = "http://opencode.replay.invalid";
/** The project directory recordings were scrubbed to. */
export const REPLAY_DIRECTORY = "/project";

export interface FakeOpencodeOptions {
  baseUrl?: string;
  /** Requests the fixture could not answer are appended here as "METHOD /path?query". */
  unrecorded?: string[];
  /** Longest an event waits for the requests recorded before it. Default 1000 ms. */
  maxEventWaitMs?: number;
  /**
   * A read (GET, not a stream) made more often than recorded gets its last recorded answer again:
   * the state opencode last showed. Only for tests that ask one recorded state several questions
   * (the catalog and session functions of the core); off by default and never for the tools'
   * replays, so a replay fails when a tool reads more than the recording holds.
   */
  repeatReads?: boolean;
  /**
   * The server's operations the handlers route by (default: the generated 1.x table); a 2.x
   * recording's are its server's own document's (`useV2Replay`).
   */
  operations?: Iterable<{ id: string; method: string; path: string }>;
}

const keyOf = (method: string, path: string, query: Record<string, string>) =>
  `${method.toUpperCase()} ${path}?${new URLSearchParams(Object.entries(query).sort(([a], [b]) => a.localeCompare(b))).toString()}`;

/** `/session/{sessionID}` → `/session/:sessionID` (msw's path syntax). */
const mswPath = (path: string) => path.replace(/\{([^}]+)\}/g, ":$1");
const paramCount = (path: string) => (path.match(/\{[^}]+\}|\*/g) ?? []).length;

export interface FakeOpencode {
  handlers: HttpHandler[];
  /**
   * Tool scenarios: the test made recorded call `index`. Events recorded after that call started
   * wait for it, as they waited for the client in the recording (a wait that starts late must not
   * find the turn already over when, recorded, it watched it end).
   */
  callMade(index: number): void;
}

export function fakeOpencode(fixture: Fixture, options: FakeOpencodeOptions = {}): FakeOpencode {
  const baseUrl = (options.baseUrl ?? REPLAY_URL).replace(/\/+$/, "");
  const unrecorded = options.unrecorded ?? [];
  const maxEventWaitMs = options.maxEventWaitMs ?? 1_000;
  // Per operation, then per concrete request: the recorded answers still to give, and the last one given.
  const queues = new Map<string, Interaction[]>();
  const last = new Map<string, Interaction>();
  const table = [...(options.operations ?? Object.values(operations))].sort((a, b) => paramCount(a.path) - paramCount(b.path));
  const match = options.operations ? routeMatcher(table) : operationFor;
  for (const interaction of fixture.interactions) {
    const op = interaction.operationId ?? match(interaction.method, interaction.path) ?? "(no operation)";
    const key = `${op} ${keyOf(interaction.method, interaction.path, interaction.query)}`;
    queues.set(key, [...(queues.get(key) ?? []), interaction]);
  }
  // Interactions served so far (or given up on by a timed-out event), and who waits for more.
  const done = new Set<Interaction>();
  const waiters = new Set<() => void>();
  const markDone = (interaction: Interaction) => {
    done.add(interaction);
    waiters.forEach((wake) => wake());
  };
  // The recorded tool calls' start times block events like requests do, until callMade.
  const callGates = (fixture.calls ?? []).map((c) => ({ atMs: c.atMs ?? 0 }) as Interaction);
  const blockersOf = (atMs: number) => [...fixture.interactions, ...callGates].filter((i) => i.atMs < atMs && !done.has(i));

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

  const answer = (interaction: Interaction, request: Request) => {
    const headers = { ...(interaction.contentType ? { "content-type": interaction.contentType } : {}), ...interaction.headers };
    if (interaction.events) return new HttpResponse(eventStream(interaction, request.signal), { status: interaction.status, headers });
    if (interaction.body === undefined) return new HttpResponse(null, { status: interaction.status, headers });
    const isJson = (interaction.contentType ?? "").includes("json");
    const body = isJson || typeof interaction.body !== "string" ? JSON.stringify(interaction.body) : interaction.body;
    return new HttpResponse(body, { status: interaction.status, headers });
  };

  const refuse = (request: Request, url: URL) => {
    const what = `${request.method} ${url.pathname}${url.search ? decodeURIComponent(url.search) : ""}`;
    unrecorded.push(what);
    const message = `the replayed fixture "${fixture.scenario}" holds no (more) ${what}`;
    return HttpResponse.json({ name: "UnrecordedRequest", data: { message } }, { status: 501 });
  };

  const resolverFor =
    (op: string) =>
    ({ request }: { request: Request }) => {
      const url = new URL(request.url);
      const key = `${op} ${keyOf(request.method, url.pathname, Object.fromEntries(url.searchParams))}`;
      const interaction = queues.get(key)?.shift();
      if (interaction) {
        last.set(key, interaction);
        markDone(interaction);
        return answer(interaction, request);
      }
      const again = last.get(key);
      if (options.repeatReads && again && request.method === "GET" && !again.events) return answer(again, request);
      return refuse(request, url);
    };

  // Literal routes before templated ones (`/session/status` before `/session/{sessionID}`, `table`
  // is sorted so): msw answers with the first handler that matches.
  const handlers = [
    ...table.map((op) => http[op.method.toLowerCase() as HttpMethod](`${baseUrl}${mswPath(op.path)}`, resolverFor(op.id))),
    // Paths the table does not know (a 2.x route, a typo) are unrecorded too, never a network call.
    http.all(`${baseUrl}/*`, resolverFor("(no operation)")),
  ];
  return {
    handlers,
    callMade(index) {
      const gate = callGates[index];
      if (!gate) return;
      // Reads recorded before this call that the test did not make (it read less often than the
      // recording did) stop holding events back: the calls that would have made them are over.
      for (const i of fixture.interactions) if (i.method === "GET" && !i.events && i.atMs < gate.atMs) done.add(i);
      markDone(gate);
    },
  };
}
