// The audit trail: one JSON line per call that changed something. Append-only, mode 0600, one
// write() per line through an O_APPEND descriptor, so concurrent writers never interleave lines.
// Entries never hold a secret or a full prompt: a prompt is kept as its hash, length and first line.
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import { readJsonLines } from "../state-dir.js";
import { auditTime } from "./audit-time.js";

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
  /** done, error, blocked, running, ok … */
  outcome: string;
  error?: string;
  prompt?: PromptDigest;
  /** Anything else worth keeping (e.g. the operation of oc_api, a fallback switch). */
  detail?: Record<string, unknown>;
}

export interface PromptDigest {
  sha256: string;
  length: number;
  first_line: string;
}

export function digestPrompt(text: string): PromptDigest {
  const first = text.split("\n", 1)[0] ?? "";
  return { sha256: createHash("sha256").update(text).digest("hex"), length: text.length, first_line: first.length > 120 ? `${first.slice(0, 117)}...` : first };
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

export class AuditLog {
  private handle: Promise<FileHandle> | undefined;
  private queue: Promise<void> = Promise.resolve();

  /** `path` undefined = auditing off. */
  constructor(readonly path: string | undefined) {}

  append(entry: Omit<AuditEntry, "time"> & { time?: string }): Promise<void> {
    if (!this.path) return Promise.resolve();
    const line = `${JSON.stringify(bounded({ time: new Date().toISOString(), ...entry }))}\n`;
    // Serialised in-process; O_APPEND keeps other processes' lines whole.
    this.queue = this.queue.then(async () => {
      const handle = await this.open();
      await handle.write(line);
    });
    return this.queue.catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.queue.catch(() => undefined);
    const handle = await this.handle?.catch(() => undefined);
    this.handle = undefined;
    await handle?.close();
  }

  private open(): Promise<FileHandle> {
    this.handle ??= (async () => {
      mkdirSync(dirname(this.path!), { recursive: true, mode: 0o700 });
      const handle = await open(this.path!, "a", 0o600);
      await handle.chmod(0o600); // an existing file keeps its mode otherwise
      return handle;
    })();
    return this.handle;
  }
}

export interface AuditFilter {
  sessionId?: string;
  tool?: string;
  /** An ISO date or time, an age ("30m", "2h", "7d"), or epoch ms; anything else is a UsageError. */
  since?: string | number;
  until?: string | number;
  /** Newest entries last; at most this many (default 100). */
  limit?: number;
}

export async function readAudit(path: string, filter: AuditFilter = {}): Promise<AuditEntry[]> {
  const since = filter.since === undefined ? -Infinity : auditTime("`since`", filter.since);
  const until = filter.until === undefined ? Infinity : auditTime("`until`", filter.until);
  const entries: AuditEntry[] = [];
  for (const entry of (await readJsonLines(path)) as AuditEntry[]) {
    const at = new Date(entry.time).getTime();
    if (at < since || at > until) continue;
    if (filter.sessionId && entry.session_id !== filter.sessionId) continue;
    if (filter.tool && entry.tool !== filter.tool) continue;
    entries.push(entry);
  }
  return entries.slice(-(filter.limit ?? 100));
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
