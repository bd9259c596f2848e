// The recorded-traffic fixture format shared by `npm run record` and the msw replay.
// One file per scenario: test/fixtures/<opencode version>/<scenario>.json.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { V2Event as V2RecordedEvent } from "../../src/client/v2/event-framing.js";
import type { V2Message as V2RecordedMessage } from "../../src/core/engine/v2/v2-messages.js";

/** One chunk of a recorded `text/event-stream`: one SSE event. */
export interface RecordedEvent {
  /** ms after the stream's request started. */
  atMs: number;
  /** The event's `data:` field, parsed when it is JSON (opencode sends only `data:` lines). */
  data: unknown;
}

export interface Interaction {
  operationId?: string;
  /** ms after the scenario started that the request was sent; replay uses it to keep events causal. */
  atMs: number;
  method: string;
  path: string;
  /** Decoded query parameters. */
  query: Record<string, string>;
  requestBody?: unknown;
  status: number;
  contentType: string | null;
  /** The response headers clients read (`x-next-cursor`, the message paging cursor), when sent. */
  headers?: Record<string, string>;
  /** Parsed JSON (or text) body; absent for an empty body and for event streams. */
  body?: unknown;
  events?: RecordedEvent[];
}

/** One MCP tool call of a tool scenario (`npm run record -- --tools`) and what the live run answered. */
export interface RecordedToolCall {
  /** ms after the recording started that the call was made (the replay holds later events back until then). */
  atMs?: number;
  /** ms after the recording started that the call answered (recordings made before it was kept: the next call's start). */
  endMs?: number;
  tool: string;
  arguments: Record<string, unknown>;
  /** What the live call answered: error or not, its status, the start of its text (for people reading the fixture). */
  recorded: { isError: boolean; status?: string; text?: string };
}

export interface Fixture {
  scenario: string;
  opencodeVersion: string;
  /** What was left out or changed while recording (dropped event types, truncations). */
  notes?: string[];
  /** Tool scenarios only: the calls made, in order; their traffic is `interactions`. */
  calls?: RecordedToolCall[];
  interactions: Interaction[];
}

export const FIXTURE_VERSION = "1.18.33";
const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures");
export const FIXTURE_DIR = join(FIXTURES, FIXTURE_VERSION);

/** Where fixtures recorded from opencode `version` go (`npm run record` with OPENCODE_BIN writes there). */
export function fixtureDirFor(version: string): string {
  return join(FIXTURES, version);
}

/** Scenarios `npm run record` writes (and the replay tests read). */
export const SCENARIOS = [
  "session-crud",
  "text-turn",
  "tool-turn",
  "permission",
  "retry-failure",
  "providers",
  // The catalogs (providers with secrets, agents, commands, MCP servers, …) the discovery functions read.
  "discovery",
  // A session with a failed turn, a file-writing turn, a compaction and a shell command, read by the session functions.
  "session-history",
  // Sessions seen busy and retrying, then aborted and deleted (and an idle one deleted), by the session functions.
  "session-stop",
  // How failed and stopped turns end, with the events' real timing (the double idle, the late error).
  "end-error-400",
  "end-error-401",
  "end-429-fast",
  "end-500-fast",
  "end-unknown-model",
  "end-abort-stream",
  "end-abort-retry",
  "end-permission-rejected",
  "end-question-rejected",
  // A turn opencode compacts by itself midway (a step's usage fills the small context window): the
  // compaction marker, its summary and the synthetic "Continue" are part of the one turn.
  "compaction-turn",
  // Its summary call answers HTTP 400: the failed summary (error on it, no "Continue") ends the turn.
  "compaction-error-400",
  // A prompt for an unknown agent: 204, then only two session.error events (no message, no status, no idle).
  "end-unknown-agent",
  // opencode SIGSTOPped under a turn and continued: the stream before, the one opened during the stop, the reads of a reconnect.
  "server-stopped",
  // Sub-agents' permissions while they wait, at depth 0-2, beside an unrelated and a deleted session's
  // (recording/subagent-requests.ts): the sessions listed with their parents, the requests listed.
  "subagent-requests",
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

/** 2.x recordings (`npm run record -- --v2`): test/fixtures/2.x-<server version>/. */
export const V2_FIXTURE_VERSION = "2.0.0-src.b622626";
export const V2_SCENARIOS = [
  "text-turn",
  "write-turn",
  "http-400",
  "interrupt",
  "permission",
  "question",
  "permission-rejected",
  "steer",
  "reads",
  "compaction-failed",
  // Sub-agents' permissions while they wait (recording/subagent-requests.ts), as on 1.x.
  "subagent-requests",
  "subagent-notice",
] as const;
export type V2ScenarioName = (typeof V2_SCENARIOS)[number];

export function v2FixtureDir(version: string = V2_FIXTURE_VERSION): string {
  return join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", `2.x-${version}`);
}

export function loadV2Fixture(name: V2ScenarioName): Fixture {
  return JSON.parse(readFileSync(join(v2FixtureDir(), `${name}.json`), "utf8")) as Fixture;
}

/**
 * A 2.x recording's session, its event stream and the messages the server listed last: what the
 * engine's event translations are checked against.
 */
export function loadV2Session(name: V2ScenarioName) {
  const fixture = loadV2Fixture(name);
  const created = fixture.interactions.find((i) => i.operationId?.endsWith("session.create"))!.body as {
    data: { id: string; location: { directory: string } };
  };
  const stream = fixture.interactions.find((i) => isEventStream(i.contentType))!;
  const final = (fixture.interactions.findLast((i) => i.operationId?.endsWith("message.list"))!.body as { data: V2RecordedMessage[] }).data;
  return { sessionId: created.data.id, directory: created.data.location.directory, events: stream.events!.map((e) => e.data as V2RecordedEvent), final };
}

export function fixturePath(name: string, dir = FIXTURE_DIR): string {
  return join(dir, `${name}.json`);
}

export function loadFixture(name: string): Fixture {
  return JSON.parse(readFileSync(fixturePath(name), "utf8")) as Fixture;
}

export function isEventStream(contentType: string | null | undefined): boolean {
  return (contentType ?? "").startsWith("text/event-stream");
}
