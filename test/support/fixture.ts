// The recorded-traffic fixture format shared by `npm run record` and the msw replay.
// One file per scenario: test/fixtures/<opencode version>/<scenario>.json.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

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
  /** Parsed JSON (or text) body; absent for an empty body and for event streams. */
  body?: unknown;
  events?: RecordedEvent[];
}

export interface Fixture {
  scenario: string;
  opencodeVersion: string;
  /** What was left out or changed while recording (dropped event types, truncations). */
  notes?: string[];
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
export const SCENARIOS = ["session-crud", "text-turn", "tool-turn", "permission", "retry-failure", "providers"] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export function fixturePath(name: string, dir = FIXTURE_DIR): string {
  return join(dir, `${name}.json`);
}

export function loadFixture(name: string): Fixture {
  return JSON.parse(readFileSync(fixturePath(name), "utf8")) as Fixture;
}

export function isEventStream(contentType: string | null | undefined): boolean {
  return (contentType ?? "").startsWith("text/event-stream");
}
