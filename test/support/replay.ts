// msw replay of one recorded fixture for the tests of a file, on the shared fake opencode
// (fake-opencode.ts): each request gets the next recorded interaction with the same method, path
// and query, events stay causal, and a request the fixture does not hold fails the test. A 2.x
// recording (`useV2Replay`) the same, routed by its server's own document.
import { fileURLToPath } from "node:url";
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import type { ServerIdentity } from "../../src/client/detect.js";
import { connect, type OpencodeClient } from "../../src/client/index.js";
import { fakeOpencode, REPLAY_DIRECTORY, REPLAY_URL, type FakeOpencodeOptions } from "./fake-opencode.js";
import { connectV2, type OpencodeV2Client } from "../../src/client/v2/index.js";
import { loadSpec } from "../../src/openapi/load-document.js";
import { listOperations, type OpenApiDocument } from "../../src/openapi/spec.js";
import { loadFixture, loadV2Fixture, V2_FIXTURE_VERSION, type Fixture, type V2ScenarioName } from "./fixture.js";

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
  const unrecorded = serve(fixture, { ...options, baseUrl });
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

/** Serves `fixture` for the tests of the calling file or describe block; returns the list of requests it could not answer. */
function serve(fixture: Fixture, options: Omit<FakeOpencodeOptions, "unrecorded">): string[] {
  const unrecorded: string[] = [];
  const server = setupServer();
  beforeAll(() => server.listen({ onUnhandledRequest: "error" }));
  beforeEach(() => {
    unrecorded.length = 0;
    server.resetHandlers(...fakeOpencode(fixture, { ...options, unrecorded }).handlers);
  });
  afterEach(() => {
    if (unrecorded.length) throw new Error(`requests not in the fixture "${fixture.scenario}": ${unrecorded.join(", ")}`);
  });
  afterAll(() => server.close());
  return unrecorded;
}

/** The document of the 2.x server the `--v2` recordings were made with (the pre-release the suite builds). */
export const V2_RECORDED_SPEC = fileURLToPath(new URL("../../spec/v2-b622626/openapi.json", import.meta.url));

export interface V2Replay {
  fixture: Fixture;
  baseUrl: string;
  unrecorded: string[];
  /** What `connectV2` needs to talk to the replay as to the recorded server, without asking it. */
  connectOptions: { url: string; spec: OpenApiDocument; identity: ServerIdentity };
  connect(): Promise<OpencodeV2Client>;
}

/**
 * {@link useReplay} for a 2.x recording (`npm run record -- --v2`): the fake opencode routes by the
 * recorded server's own document, whose operation ids the recording holds.
 */
export function useV2Replay(name: V2ScenarioName, options: Omit<FakeOpencodeOptions, "unrecorded" | "operations"> = {}): V2Replay {
  const fixture = loadV2Fixture(name);
  const baseUrl = options.baseUrl ?? REPLAY_URL;
  const spec = loadSpec(V2_RECORDED_SPEC);
  const unrecorded = serve(fixture, { ...options, baseUrl, operations: listOperations(spec) });
  const identity: ServerIdentity = { major: 2, version: V2_FIXTURE_VERSION, via: "/api/health", specPath: "/openapi.json" };
  const connectOptions = { url: baseUrl, spec, identity };
  return { fixture, baseUrl, unrecorded, connectOptions, connect: () => connectV2(connectOptions) };
}
