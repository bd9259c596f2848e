// The wire shapes of the MCP Tasks extension (`io.modelcontextprotocol/tasks`, the ext-tasks
// specification for 2026-07-28), as this server sends them. The SDK (2.4.0) serves no part of the
// extension, so the names and fields here are the specification's own (docs/tasks.md says which
// parts of it are covered).
import type { ClientCapabilities, InputRequest } from "@modelcontextprotocol/server";

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** "Missing Required Client Capability": a tasks/* request from a client that did not declare the extension. */
export const MISSING_CAPABILITY = -32021;

export type TaskStatus = "working" | "input_required" | "completed" | "cancelled" | "failed";

export interface Task {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  /** From creation, in ms; null: unlimited. */
  ttlMs: number | null;
  pollIntervalMs?: number;
}

/** What tasks/get answers: the task with its status's payload inlined. */
export type DetailedTask =
  | (Task & { status: "working" | "cancelled" })
  | (Task & { status: "input_required"; inputRequests: Record<string, InputRequest> })
  | (Task & { status: "completed"; result: Record<string, unknown> })
  | (Task & { status: "failed"; error: { code: number; message: string } });

/** The answer of a tools/call that became a task. */
export type CreateTaskResult = Task & { resultType: "task" };

/** The request declares the extension in its per-request capabilities (an empty object is support). */
export function declaresTasks(capabilities: ClientCapabilities | undefined): boolean {
  const extension = (capabilities as { extensions?: Record<string, unknown> } | undefined)?.extensions?.[TASKS_EXTENSION];
  return typeof extension === "object" && extension !== null && !Array.isArray(extension);
}
