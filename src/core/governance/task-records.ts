// $STATE_DIR/tasks.jsonl: one JSON line when an MCP server starts a task (oc_delegate, or one task of
// oc_delegate_parallel) and one when the call has its result, so that a separate process (the web
// console) can list every MCP server's work with what only the caller knew: the batch, the budget,
// the checks, the fallbacks asked for. Live state comes from opencode itself, not from here.
// Append-only through O_APPEND, one write per line, rotated by size (as the audit trail), mode 0600;
// no secrets: the server is named by its URL without credentials, the task by its first line only.
import { join } from "node:path";
import { linesBackward, type Cursor } from "./jsonl-tail.js";
import { sharedWriter, type JsonlWriter, type Written } from "./jsonl-writer.js";
import type { Rotation } from "./segments.js";

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
  isolation?: "instance" | "worktree";
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
  /** The status the tool answered with (running, blocked and unreachable are not an end: the console keeps following). */
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

/** The process's one writer of the file, as for the audit trail (jsonl-writer.ts). */
export class TaskRecords {
  readonly writer: JsonlWriter;

  constructor(
    readonly path: string,
    rotation?: Rotation,
  ) {
    this.writer = sharedWriter(path, rotation);
  }

  /** Never fails the caller (a console that misses a line is better than a task that fails); a line not written is held, retried and reported by the writer. */
  append(record: Omit<TaskStart, "time" | "pid"> | Omit<TaskEnd, "time">): Promise<Written> {
    return this.writer.append(JSON.stringify({ time: new Date().toISOString(), ...(record.event === "start" ? { pid: process.pid } : {}), ...record }));
  }

  async close(): Promise<void> {
    await this.writer.settled();
  }
}

/** How much of the newest task records a reader takes (the web console at start): about 20,000 records. */
export const TASK_WINDOW_BYTES = 16 * 1024 * 1024;

/** The newest records (within `windowBytes`, across rotated segments, before `from`), oldest first; a torn line is skipped. */
export async function readTaskRecords(path: string, windowBytes = TASK_WINDOW_BYTES, from?: Cursor): Promise<TaskRecord[]> {
  const records: TaskRecord[] = [];
  const lines = linesBackward(path, { from, maxBytes: windowBytes });
  for (let step = await lines.next(); !step.done; step = await lines.next()) {
    try {
      const r = JSON.parse(step.value.text) as TaskRecord;
      if (typeof r?.session_id === "string" && (r.event === "start" || r.event === "end")) records.push(r);
    } catch {
      // a torn line
    }
  }
  return records.reverse();
}
