// $STATE_DIR/tasks.jsonl: one JSON line when an MCP server starts a task (oc_delegate, or one task of
// oc_delegate_parallel) and one when the call has its result, so that a separate process (the web
// console) can list every MCP server's work with what only the caller knew: the batch, the budget,
// the checks, the fallbacks asked for. Live state comes from opencode itself, not from here.
// Append-only through O_APPEND, one write per line (as the audit trail), mode 0600; no secrets: the
// server is named by its URL without credentials, the task by its first line only.
import { mkdirSync } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { dirname, join } from "node:path";
import { readJsonLines } from "../state-dir.js";

export interface TaskStart {
  event: "start";
  time: string;
  session_id: string;
  /** Shared by the tasks of one oc_delegate_parallel call. */
  batch_id?: string;
  /** Position in the batch. */
  index?: number;
  tool: string;
  /** The MCP server process that started it. */
  pid: number;
  /** The opencode server's URL, without credentials (with isolation "instance": the shared one; the instance's is in the registry). */
  server: string;
  isolation?: "instance";
  directory?: string;
  title?: string;
  /** The task's first line (at most 120 characters). */
  task?: string;
  model?: string;
  agent?: string;
  fallbacks?: string[];
  budget?: { max_tokens?: number; max_cost_usd?: number };
  checks?: string[];
}

export interface TaskEnd {
  event: "end";
  time: string;
  session_id: string;
  /** The status the tool answered with (running and blocked are not an end: the console keeps following). */
  status: string;
  model?: string;
  tokens?: number;
  cost?: number;
  files?: string[];
  error?: string;
  fallbacks?: Array<{ from: string; to: string; reason: string; at: string }>;
  checks?: Array<{ round: number; command: string; passed: boolean; exit: number | null }>;
}

export type TaskRecord = TaskStart | TaskEnd;

export function taskRecordsPath(stateDir: string): string {
  return join(stateDir, "tasks.jsonl");
}

export function firstLine(text: string): string {
  const first = text.split("\n", 1)[0] ?? "";
  return first.length > 120 ? `${first.slice(0, 117)}...` : first;
}

export class TaskRecords {
  private handle: Promise<FileHandle> | undefined;
  private queue: Promise<void> = Promise.resolve();

  constructor(readonly path: string) {}

  /** Never fails the caller: a console that misses a line is better than a task that fails. */
  append(record: Omit<TaskStart, "time" | "pid"> | Omit<TaskEnd, "time">): Promise<void> {
    const line = `${JSON.stringify({ time: new Date().toISOString(), ...(record.event === "start" ? { pid: process.pid } : {}), ...record })}\n`;
    this.queue = this.queue
      .then(async () => {
        this.handle ??= (async () => {
          mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
          return open(this.path, "a", 0o600);
        })();
        await (await this.handle).write(line);
      })
      .catch(() => undefined);
    return this.queue;
  }

  async close(): Promise<void> {
    await this.queue;
    const handle = await this.handle?.catch(() => undefined);
    this.handle = undefined;
    await handle?.close();
  }
}

/** Every record of the file, oldest first; a torn last line is skipped. */
export async function readTaskRecords(path: string): Promise<TaskRecord[]> {
  return ((await readJsonLines(path)) as TaskRecord[]).filter((r) => typeof r?.session_id === "string" && (r.event === "start" || r.event === "end"));
}
