// Makes a recording safe and stable to commit: no password, no temp paths or random ports, ids
// renamed to sequential ones (consistently across paths, bodies and events), epoch-ms timestamps
// moved to a fixed epoch, noise events dropped and huge strings cut. Two recordings of the same
// scenario then differ only in timing.
import type { Fixture, Interaction } from "../fixture.js";

export interface ScrubContext {
  password: string;
  /** Exact strings to replace, e.g. the temp project dir by `/project`. Longest are applied first. */
  replace: Array<[from: string, to: string]>;
  /** Epoch ms when the scenario started: timestamps near it are moved to FIXED_EPOCH + offset. */
  startedAt: number;
  /** Ids to keep as they are, e.g. the made-up id of a "missing session" call a test repeats. */
  keepIds?: string[];
}

/** 2026-01-01T00:00:00Z: recorded timestamps keep their offsets from the scenario start. */
export const FIXED_EPOCH = 1_767_225_600_000;
const TIME_WINDOW_MS = 3_600_000;
const MAX_STRING = 2_000;
const KEEP_OF_LONG_STRING = 300;

// Why these events go: `sync` duplicates every durable event (replication records the client
// skips), `server.heartbeat` depends on timing (every 10 s), `plugin.added` is ~45 events per
// fresh instance that no test looks at; `catalog.updated`, `reference.updated` and
// `integration.updated` are instance start-up events that arrive (or not) at varying points.
export const DROPPED_EVENTS = new Set(["sync", "server.heartbeat", "plugin.added", "catalog.updated", "reference.updated", "integration.updated"]);

const ISO_TIME = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{3})?Z\b/g;
const HTTP_DATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;
const ID = /\b(ses|msg|prt|per|que|evt|wrk|pty|frm)_[0-9A-Za-z]{16,}\b|\bcall_\d+(?:_\d+)*\b/g;

export function scrubFixture(raw: Fixture, context: ScrubContext): Fixture {
  // Absolute paths also appear relative to "/" (Session.path of a project outside git).
  const relative = context.replace
    .filter(([from]) => from.startsWith("/") && from.length > 1)
    .map(([from, to]): [string, string] => [from.slice(1), to.replace(/^\//, "")]);
  const replacements = [...context.replace, ...relative].filter(([from]) => from.length > 0).sort((a, b) => b[0].length - a[0].length);
  const ids = new Map<string, string>();
  const slugs = new Map<string, string>();
  const counters = new Map<string, number>();
  let truncated = 0;

  const keep = new Set(context.keepIds ?? []);
  const renameId = (id: string) => {
    if (keep.has(id)) return id;
    let renamed = ids.get(id);
    if (!renamed) {
      const prefix = id.slice(0, id.indexOf("_"));
      const n = (counters.get(prefix) ?? 0) + 1;
      counters.set(prefix, n);
      renamed = `${prefix}_${String(n).padStart(4, "0")}`;
      ids.set(id, renamed);
    }
    return renamed;
  };
  const scrubString = (s: string): string => {
    let out = s;
    for (const [from, to] of replacements) out = out.split(from).join(to);
    out = out.replace(ID, renameId);
    // Our own answers (the tool scenarios' recorded texts) show times as ISO strings and name slugs.
    out = out.replace(ISO_TIME, (iso) => {
      const at = Date.parse(iso);
      return Math.abs(at - context.startedAt) < TIME_WINDOW_MS ? new Date(FIXED_EPOCH + (at - context.startedAt)).toISOString() : iso;
    });
    for (const [slug, renamed] of slugs) out = out.split(slug).join(renamed);
    if (out.length > MAX_STRING) {
      truncated++;
      out = `${out.slice(0, KEEP_OF_LONG_STRING)}…[${out.length - KEEP_OF_LONG_STRING} chars truncated by npm run record]`;
    }
    return out;
  };
  // Session slugs are random words ("cosmic-moon"): numbered like ids so recordings compare equal.
  const renameSlug = (slug: string) => {
    if (!slugs.has(slug)) slugs.set(slug, `slug-${String(slugs.size + 1).padStart(4, "0")}`);
    return slugs.get(slug)!;
  };
  const scrubNumber = (n: number): number =>
    Number.isInteger(n) && Math.abs(n - context.startedAt) < TIME_WINDOW_MS ? FIXED_EPOCH + (n - context.startedAt) : n;
  // HTTP dates (the `date` response header kept inside APIError) move with the timestamps.
  const scrubHttpDate = (s: string): string => {
    const at = Date.parse(s);
    return Math.abs(at - context.startedAt) < TIME_WINDOW_MS ? new Date(FIXED_EPOCH + (at - context.startedAt)).toUTCString() : s;
  };
  const scrub = (value: unknown): unknown => {
    if (typeof value === "string") return HTTP_DATE.test(value) ? scrubHttpDate(value) : scrubString(value);
    if (typeof value === "number") return scrubNumber(value);
    if (Array.isArray(value)) return value.map(scrub);
    if (value && typeof value === "object") {
      // Keys too: some maps are keyed by id (GET /session/status).
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [scrubString(k), k === "slug" && typeof v === "string" ? renameSlug(v) : scrub(v)]));
    }
    return value;
  };

  let dropped = 0;
  const interactions = raw.interactions.map((i): Interaction => {
    const out: Interaction = { ...i, path: scrubString(i.path), query: scrub(i.query) as Record<string, string> };
    if (i.requestBody !== undefined) out.requestBody = scrub(i.requestBody);
    if (i.body !== undefined) out.body = scrub(i.body);
    if (i.events) {
      const kept = i.events.filter((e) => !DROPPED_EVENTS.has(eventType(e.data) ?? ""));
      dropped += i.events.length - kept.length;
      out.events = kept.map((e) => ({ atMs: e.atMs, data: scrub(e.data) }));
    }
    return out;
  });

  const notes = [...(raw.notes ?? [])];
  // No count: how many heartbeats and start-up events fell into a recording varies.
  if (dropped) notes.push(`dropped events of types ${[...DROPPED_EVENTS].join(", ")} (noise, see scrub.ts)`);
  if (truncated) notes.push(`truncated ${truncated} strings longer than ${MAX_STRING} chars`);
  // After the interactions, so the calls' ids get the names the traffic gave them.
  const calls = raw.calls?.map((c) => ({ ...c, arguments: scrub(c.arguments) as Record<string, unknown>, recorded: scrub(c.recorded) as typeof c.recorded }));
  const fixture: Fixture = {
    scenario: raw.scenario,
    opencodeVersion: raw.opencodeVersion,
    ...(notes.length ? { notes } : {}),
    ...(calls ? { calls } : {}),
    interactions,
  };
  assertClean(fixture, context, replacements);
  return fixture;
}

function eventType(data: unknown): string | undefined {
  // 1.x wraps the event in `payload`; 2.x sends it as is.
  const event = data as { payload?: { type?: unknown }; type?: unknown } | null;
  const type = event?.payload?.type ?? event?.type;
  return typeof type === "string" ? type : undefined;
}

/** Refuses to write a fixture that still holds a secret or a machine path. */
function assertClean(fixture: Fixture, context: ScrubContext, replacements: Array<[string, string]>): void {
  const text = JSON.stringify(fixture);
  const basic = Buffer.from(`opencode:${context.password}`).toString("base64");
  for (const secret of [context.password, basic]) {
    if (secret && text.includes(secret)) throw new Error(`scrub: the ${fixture.scenario} fixture still contains the server password`);
  }
  for (const [from] of replacements) {
    if (text.includes(from)) throw new Error(`scrub: the ${fixture.scenario} fixture still contains ${from}`);
  }
}
