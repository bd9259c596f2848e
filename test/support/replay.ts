// msw replay of one recorded fixture for the tests of a file, on the shared fake opencode
// (fake-opencode.ts): each request gets the next recorded interaction with the same method, path
// and query, events stay causal, and a request the fixture does not hold fails the test.
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { connect, type OpencodeClient } from "../../src/client/index.js";
import { fakeOpencode, REPLAY_DIRECTORY, REPLAY_URL, type FakeOpencodeOptions } from "./fake-opencode.js";
import { loadFixture, type Fixture } from "./fixture.js";

export { REPLAY_DIRECTORY, REPLAY_URL } from "./fake-opencode.js";

export interface Replay {
  fixture: Fixture;
  baseUrl: string;
  directory: string;
  /** Requests of the current test the fixture could not answer; a non-empty list fails the test. */
  unrecorded: string[];
  /** A client for the replay (no password: headers are not recorded or checked). */
  connect(): OpencodeClient;
  /** A client for the replay that lists the requests it makes, for tests of what the code asks. */
  connectSeen(): { client: OpencodeClient; seen: SeenRequest[] };
}

/** A request a {@link Replay.connectSeen} client made. */
export interface SeenRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  body?: unknown;
}

/**
 * msw replay of one fixture for the tests of the calling file (or describe block): every test
 * starts from the fixture's first interaction; requests to other hosts are errors
 * (`onUnhandledRequest: "error"`), and requests the fixture does not hold fail the test.
 */
export function useReplay(name: string, options: Omit<FakeOpencodeOptions, "unrecorded"> = {}): Replay {
  const fixture = loadFixture(name);
  const baseUrl = options.baseUrl ?? REPLAY_URL;
  const unrecorded: string[] = [];
  const server = setupServer();
  beforeAll(() => server.listen({ onUnhandledRequest: "error" }));
  beforeEach(() => {
    unrecorded.length = 0;
    server.resetHandlers(...fakeOpencode(fixture, { ...options, baseUrl, unrecorded }).handlers);
  });
  afterEach(() => {
    if (unrecorded.length) throw new Error(`requests not in the fixture "${name}": ${unrecorded.join(", ")}`);
  });
  afterAll(() => server.close());
  const connectSeen = () => {
    const seen: SeenRequest[] = [];
    const client = connect({
      url: baseUrl,
      directory: REPLAY_DIRECTORY,
      fetch: async (request) => {
        const url = new URL(request.url);
        const text = await request.clone().text();
        seen.push({ method: request.method, path: url.pathname, query: Object.fromEntries(url.searchParams), ...(text ? { body: JSON.parse(text) } : {}) });
        return fetch(request);
      },
    });
    return { client, seen };
  };
  return { fixture, baseUrl, directory: REPLAY_DIRECTORY, unrecorded, connect: () => connect({ url: baseUrl, directory: REPLAY_DIRECTORY }), connectSeen };
}
