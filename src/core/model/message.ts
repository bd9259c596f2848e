// A message as the core reads it: what opencode recorded of one user prompt or one assistant reply,
// its info and its parts. The shape is opencode 1.x's (the core was written for it): the v1 engine
// passes opencode's own objects on (tsc checks they fit, src/core/engine/v1/), the v2 engine maps
// 2.x messages into it (src/core/engine/v2/v2-messages.ts). Declared here, not imported from
// generated/, so the core depends on its own vocabulary and each engine on the core.
import type { FileDiff } from "./file-change.js";
import type { ModelTokens } from "./cost.js";

export interface Message {
  info: MessageInfo;
  parts: Part[];
}

export type MessageInfo = UserMessageInfo | AssistantMessageInfo;

export interface UserMessageInfo {
  id: string;
  sessionID: string;
  role: "user";
  time: { created: number };
  format?: { type: "text" } | { type: "json_schema"; schema: Record<string, unknown>; retryCount?: number };
  summary?: { title?: string; body?: string; diffs: FileDiff[] };
  agent: string;
  model: { providerID: string; modelID: string; variant?: string };
  system?: string;
  tools?: { [key: string]: boolean };
}

export interface AssistantMessageInfo {
  id: string;
  sessionID: string;
  role: "assistant";
  time: { created: number; completed?: number };
  error?: MessageError;
  /** The user message this reply answers. */
  parentID: string;
  modelID: string;
  providerID: string;
  mode: string;
  agent: string;
  path: { cwd: string; root: string };
  summary?: boolean;
  cost: number;
  tokens: ModelTokens;
  structured?: unknown;
  variant?: string;
  /** Why the model step stopped: `stop`, `length`, `tool-calls`, … */
  finish?: string;
}

/** The error a reply records (opencode's `{name, data}`). */
export type MessageError =
  | { name: "ProviderAuthError"; data: { providerID: string; message: string } }
  | { name: "UnknownError"; data: { message: string; ref?: string } }
  | { name: "MessageOutputLengthError"; data: Record<string, unknown> }
  | { name: "MessageAbortedError"; data: { message: string } }
  | { name: "StructuredOutputError"; data: { message: string; retries: number } }
  | { name: "ContextOverflowError"; data: { message: string; responseBody?: string } }
  | { name: "ContentFilterError"; data: { message: string } }
  | ApiError;

export interface ApiError {
  name: "APIError";
  data: {
    message: string;
    statusCode?: number;
    isRetryable: boolean;
    responseHeaders?: { [key: string]: string };
    responseBody?: string;
    metadata?: { [key: string]: string };
  };
}

/** One piece of a message: text, reasoning, a file, a tool call, a step's start or end, … */
export type Part =
  | TextPart
  | SubtaskPart
  | ReasoningPart
  | FilePart
  | ToolPart
  | StepStartPart
  | StepFinishPart
  | SnapshotPart
  | PatchPart
  | AgentPart
  | RetryPart
  | CompactionPart;

interface PartOf<T extends string> {
  id: string;
  sessionID: string;
  messageID: string;
  type: T;
}

export interface TextPart extends PartOf<"text"> {
  text: string;
  synthetic?: boolean;
  ignored?: boolean;
  time?: { start: number; end?: number };
  metadata?: Record<string, unknown>;
}

export interface SubtaskPart extends PartOf<"subtask"> {
  prompt: string;
  description: string;
  agent: string;
  model?: { providerID: string; modelID: string };
  command?: string;
}

export interface ReasoningPart extends PartOf<"reasoning"> {
  text: string;
  metadata?: Record<string, unknown>;
  time: { start: number; end?: number };
}

interface SourceText {
  value: string;
  start: number;
  end: number;
}

export type FilePartSource =
  | { text: SourceText; type: "file"; path: string }
  | {
      text: SourceText;
      type: "symbol";
      path: string;
      range: { start: { line: number; character: number }; end: { line: number; character: number } };
      name: string;
      kind: number;
    }
  | { text: SourceText; type: "resource"; clientName: string; uri: string };

export interface FilePart extends PartOf<"file"> {
  mime: string;
  filename?: string;
  url: string;
  source?: FilePartSource;
}

export type ToolState =
  | { status: "pending"; input: Record<string, unknown>; raw: string }
  | { status: "running"; input: Record<string, unknown>; title?: string; metadata?: Record<string, unknown>; time: { start: number } }
  | {
      status: "completed";
      input: Record<string, unknown>;
      output: string;
      title: string;
      metadata: Record<string, unknown>;
      time: { start: number; end: number; compacted?: number };
      attachments?: FilePart[];
    }
  | { status: "error"; input: Record<string, unknown>; error: string; metadata?: Record<string, unknown>; time: { start: number; end: number } };

export interface ToolPart extends PartOf<"tool"> {
  callID: string;
  tool: string;
  state: ToolState;
  metadata?: Record<string, unknown>;
}

export interface StepStartPart extends PartOf<"step-start"> {
  snapshot?: string;
}

export interface StepFinishPart extends PartOf<"step-finish"> {
  reason: string;
  snapshot?: string;
  cost: number;
  tokens: ModelTokens;
}

export interface SnapshotPart extends PartOf<"snapshot"> {
  snapshot: string;
}

export interface PatchPart extends PartOf<"patch"> {
  hash: string;
  files: string[];
}

export interface AgentPart extends PartOf<"agent"> {
  name: string;
  source?: SourceText;
}

export interface RetryPart extends PartOf<"retry"> {
  attempt: number;
  error: ApiError;
  time: { created: number };
}

export interface CompactionPart extends PartOf<"compaction"> {
  auto: boolean;
  overflow?: boolean;
  tail_start_id?: string;
}
