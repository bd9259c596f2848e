// The audit trail: one JSON line per call that changed something. Append-only, mode 0600, one
// write() per line through an O_APPEND descriptor, so concurrent writers never interleave lines;
// rotated by size (segments.ts) and read from its end in pages (jsonl-tail.ts).
// Entries never hold a secret or a full prompt: a prompt is kept as its hash, length and first line.
import { validId } from "../inputs/ids.js";
import type { PromptDigest } from "./prompt-digest.js";
import { auditTime } from "./audit-time.js";
import { cursorAt, cursorText, linesBackward, parseCursor, TIME_SLACK_MS } from "./jsonl-tail.js";
import { sharedWriter, type JsonlWriter, type Written } from "./jsonl-writer.js";
import type { Rotation } from "./segments.js";

export interface AuditEntry {
  time: string;
  tool: string;
  client?: { name?: string; version?: string };
  session_id?: string;
  directory?: string;
  model?: string;
  /** An approval's decision, and who gave it (`model`, `human` through elicitation, `human (console)` in the web console, or `policy` when denied by configuration). */
  decision?: string;
  by?: "model" | "human" | "human (console)" | "policy" | "client";
  files?: string[];
  tokens?: number;
  cost?: number;
  /** done, error, blocked, running, unreachable, ok … */
  outcome: string;
  error?: string;
  prompt?: PromptDigest;
  /** Anything else worth keeping (e.g. the operation of oc_api, a fallback switch). */
  detail?: Record<string, unknown>;
}

/** Longest string an audit line keeps (an id, a path, an error); garbage input must not make a huge line. */
const MAX_STRING = 300;
const MAX_ITEMS = 50;
/** A line stays below this; past it the detail and file list give way. */
export const MAX_LINE = 4_096;

function clip(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}… (${value.length} chars)` : value;
  if (Array.isArray(value))
    return [...value.slice(0, MAX_ITEMS).map((v) => clip(v, depth + 1)), ...(value.length > MAX_ITEMS ? [`… ${value.length - MAX_ITEMS} more`] : [])];
  if (value && typeof value === "object") {
    if (depth > 4) return "…";
    return Object.fromEntries(
      Object.entries(value)
        .slice(0, MAX_ITEMS)
        .map(([k, v]) => [clip(k, depth + 1) as string, clip(v, depth + 1)]),
    );
  }
  return value;
}

/** The entry with every string, list and nesting bounded, and the whole line under MAX_LINE. */
export function bounded(entry: AuditEntry): AuditEntry {
  const out = clip(entry) as AuditEntry;
  if (JSON.stringify(out).length < MAX_LINE) return out;
  const { detail: _detail, files, ...rest } = out;
  return { ...rest, ...(files ? { files: files.slice(0, 5) } : {}), detail: { truncated: true } };
}

/**
 * Appends audit entries to the process's one writer of the file (jsonl-writer.ts): many MCP
 * sessions, one writer and no descriptor held between writes. `path` undefined: auditing is off.
 */
export class AuditLog {
  readonly writer: JsonlWriter | undefined;

  constructor(
    readonly path: string | undefined,
    rotation?: Rotation,
  ) {
    this.writer = path ? sharedWriter(path, rotation) : undefined;
    if (this.writer) recordOutages(this.writer);
  }

  /**
   * Never rejects: says whether the line was written (else it is held and retried, and the writer
   * says it is unwritable). `nowOrNever`: not held when it cannot be written now (writer.append).
   */
  append(entry: Omit<AuditEntry, "time"> & { time?: string }, o: { nowOrNever?: boolean } = {}): Promise<Written> {
    if (!this.writer) return Promise.resolve({ written: true });
    return this.writer.append(JSON.stringify(bounded({ time: new Date().toISOString(), ...entry })), o);
  }

  /** Waits for the lines appended so far (the file itself is shared and stays usable). */
  async close(): Promise<void> {
    await this.writer?.settled();
  }
}

// Once per file in this process: when the trail can be written again, it records how long it could not.
const recording = new WeakSet<JsonlWriter>();
function recordOutages(writer: JsonlWriter): void {
  if (recording.has(writer)) return;
  recording.add(writer);
  writer.onHealth((change) => {
    if (change.kind !== "recovered") return;
    const { since, until, error, dropped } = change.outage;
    const entry: AuditEntry = {
      time: until,
      tool: "audit-trail",
      outcome: "unwritable",
      error,
      detail: { since, until, held_lines_written: change.written, dropped_lines: dropped },
    };
    void writer.append(JSON.stringify(bounded(entry)));
  });
}

export interface AuditFilter {
  sessionId?: string;
  tool?: string;
  outcome?: string;
  /** An ISO date or time, an age ("30m", "2h", "7d"), or epoch ms; anything else is a UsageError. */
  since?: string | number;
  until?: string | number;
  /** Newest entries last; at most this many (default 100). */
  limit?: number;
}

export interface AuditPageOptions extends AuditFilter {
  /** Go on before this place (the `next` of an earlier page). */
  before?: string;
  /** Stop after reading this many bytes, with a `next` to go on (default SCAN_BYTES). */
  scanBytes?: number;
  /** Stop once the entries found hold this many bytes (as written), with a `next` to go on. */
  maxBytes?: number;
}

export interface AuditPage {
  /** Newest first. */
  entries: AuditEntry[];
  /** Where older entries go on (`before`), when there may be more. */
  next?: string;
  /** Bytes of the trail read for this page. */
  scanned: number;
  /** The oldest time read, when the page stopped before the trail's start. */
  reached?: string;
}

/** How much of the trail one page reads at most: it answers in bounded time whatever the trail's size. */
export const SCAN_BYTES = 8 * 1024 * 1024;

/**
 * One page of the trail, newest first, read from its end (or `before`) across rotated segments:
 * at most `limit` entries and `scanBytes` bytes, with a `next` cursor when there may be more.
 */
export async function readAuditPage(path: string, o: AuditPageOptions = {}): Promise<AuditPage> {
  if (o.sessionId !== undefined) validId(o.sessionId, "ses", "sessionId");
  const since = o.since === undefined ? -Infinity : auditTime("`since`", o.since);
  const until = o.until === undefined ? Infinity : auditTime("`until`", o.until);
  const limit = o.limit ?? 100;
  // A time window becomes places in the file (binary search), so reading ends where the window does.
  const from = o.before !== undefined ? parseCursor("`before`", o.before) : until < Infinity ? await cursorAt(path, until + TIME_SLACK_MS, "upper") : undefined;
  const to = since > -Infinity ? await cursorAt(path, since - TIME_SLACK_MS, "lower") : undefined;
  // The filter's own bytes are searched in the raw trail: most lines of a big trail are never decoded.
  const contains = [
    o.sessionId && `"session_id":${JSON.stringify(o.sessionId)}`,
    o.tool && `"tool":${JSON.stringify(o.tool)}`,
    o.outcome && `"outcome":${JSON.stringify(o.outcome)}`,
  ].filter((n): n is string => Boolean(n));
  const entries: AuditEntry[] = [];
  let bytes = 0;
  const lines = linesBackward(path, { from, to, contains, maxBytes: o.scanBytes ?? SCAN_BYTES });
  let step = await lines.next();
  for (; !step.done; step = await lines.next()) {
    const entry = parsed(step.value.text);
    if (!entry || !matches(entry, o, since, until)) continue;
    entries.push(entry);
    bytes += step.value.text.length;
    if (entries.length < limit && bytes < (o.maxBytes ?? Infinity)) continue;
    await lines.return({ scanned: step.value.scanned });
    return { entries, next: cursorText(step.value.at), scanned: step.value.scanned, reached: entry.time };
  }
  const end = step.value;
  return { entries, ...(end.next ? { next: cursorText(end.next) } : {}), scanned: end.scanned, ...(end.reached ? { reached: end.reached } : {}) };
}

function parsed(text: string): AuditEntry | undefined {
  try {
    const value = JSON.parse(text) as AuditEntry;
    return value && typeof value.tool === "string" && typeof value.time === "string" ? value : undefined;
  } catch {
    return undefined; // a torn line from a crash
  }
}

function matches(e: AuditEntry, f: AuditFilter, since: number, until: number): boolean {
  const at = new Date(e.time).getTime();
  if (at < since || at > until) return false;
  if (f.sessionId && e.session_id !== f.sessionId) return false;
  if (f.tool && e.tool !== f.tool) return false;
  return !f.outcome || e.outcome === f.outcome;
}

/** The newest `limit` entries that match, oldest first, reading back as far as it takes (for the library; tools read pages). */
export async function readAudit(path: string, filter: AuditFilter = {}): Promise<AuditEntry[]> {
  const limit = filter.limit ?? 100;
  const found: AuditEntry[] = [];
  let before: string | undefined;
  do {
    const page = await readAuditPage(path, { ...filter, limit: limit - found.length, before });
    found.push(...page.entries);
    before = page.next;
  } while (before && found.length < limit);
  return found.reverse();
}

/** One line per entry, for people (`opencode-conductor audit`). */
export function formatAuditEntry(e: AuditEntry): string {
  const parts = [
    e.time,
    e.tool.padEnd(20),
    e.outcome.padEnd(11),
    e.session_id ?? "-",
    e.model ? `model=${e.model}` : "",
    e.decision ? `decision=${e.decision}${e.by ? ` by ${e.by}` : ""}` : "",
    e.files?.length ? `files=${e.files.length}` : "",
    e.tokens ? `tokens=${e.tokens}` : "",
    e.cost ? `cost=$${e.cost.toFixed(4)}` : "",
    e.client?.name ? `client=${e.client.name}` : "",
    e.prompt ? `"${e.prompt.first_line}"` : "",
    e.error ? `error: ${e.error}` : "",
  ];
  return parts.filter(Boolean).join("  ");
}
