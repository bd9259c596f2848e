// What a scripted model can answer, and the builders tests use to say it. A step answers one
// request (or `repeat` requests). Behaviours mirror what opencode 1.18.33 was seen to handle
// (docs/opencode-behaviour.md §0.3, §6), so a test can provoke each path on purpose.

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface StepOptions {
  /** Wait this long before answering (before the status line and headers). */
  delayMs?: number;
  /**
   * Answer only once this settles (after `delayMs`): a turn that stays at the model until the test
   * has checked what it needs while it runs, however slow the machine, instead of a delay it may outlast.
   */
  until?: Promise<unknown>;
  /** Answer this many requests with this step; default 1. */
  repeat?: number;
  /** Token counts for the usage chunk; missing fields are estimated. */
  usage?: Partial<Usage>;
}

export interface ToolCallSpec {
  name: string;
  /** An object is JSON-encoded; a string is sent as is (e.g. to send malformed arguments). */
  args: Record<string, unknown> | string;
  /** Default: `call_<n>_<i>`, unique per server. */
  id?: string;
}

export interface TextOptions extends StepOptions {
  /** Split the text into this many content deltas; default 1. */
  chunks?: number;
  /** Pause between streamed chunks, e.g. to watch progress events. */
  chunkDelayMs?: number;
}

export type TextStep = { kind: "text"; text: string; reasoning?: string; chunks: number; chunkDelayMs?: number } & StepOptions;
export type ToolCallsStep = { kind: "tool_calls"; calls: ToolCallSpec[]; text?: string } & StepOptions;
export type HttpErrorStep = {
  kind: "http_error";
  status: number;
  message: string;
  type: string;
  code: string;
  headers: Record<string, string>;
} & StepOptions;
/** error-chunk: `data:{"error":..}` then end; reset: close the connection; truncate: end with no finish/[DONE]. */
export type MidStreamMode = "error-chunk" | "reset" | "truncate";
export type MidStreamErrorStep = { kind: "mid_stream_error"; text: string; mode: MidStreamMode; message: string; cutAfterMs: number } & StepOptions;
export type HangStep = { kind: "hang"; text?: string } & StepOptions;

export type Step = TextStep | ToolCallsStep | HttpErrorStep | MidStreamErrorStep | HangStep;

export function text(content: string, options: TextOptions = {}): TextStep {
  return { ...options, kind: "text", text: content, chunks: Math.max(1, options.chunks ?? 1) };
}

/** Streams `delta.reasoning_content` first, then the answer as content. */
export function reasoning(thought: string, answer = "", options: TextOptions = {}): TextStep {
  return { ...text(answer, options), reasoning: thought };
}

export function toolCall(name: string, args: ToolCallSpec["args"] = {}, options: StepOptions & { id?: string; text?: string } = {}): ToolCallsStep {
  const { id, text: preface, ...rest } = options;
  return toolCalls([{ name, args, ...(id ? { id } : {}) }], { ...rest, ...(preface ? { text: preface } : {}) });
}

/** Several tool calls in one model response (parallel tool calls). */
export function toolCalls(calls: ToolCallSpec[], options: StepOptions & { text?: string } = {}): ToolCallsStep {
  if (calls.length === 0) throw new Error("toolCalls needs at least one call");
  return { ...options, kind: "tool_calls", calls };
}

export interface HttpErrorOptions extends StepOptions {
  /** Sets the `retry-after-ms` header (opencode honours it exactly). */
  retryAfterMs?: number;
  /** Sets the `retry-after` header: seconds, or an HTTP date string. */
  retryAfter?: number | string;
  message?: string;
  type?: string;
  code?: string;
  headers?: Record<string, string>;
}

const ERROR_DEFAULTS: Record<number, [message: string, type: string, code: string]> = {
  400: ["Bad request", "invalid_request_error", "bad_request"],
  401: ["Invalid API key", "invalid_request_error", "invalid_api_key"],
  404: ["The model does not exist", "invalid_request_error", "model_not_found"],
  429: ["Rate limit exceeded", "rate_limit_error", "rate_limit"],
  500: ["Internal server error", "server_error", "internal_error"],
  503: ["Service overloaded", "server_error", "overloaded"],
};

export function httpError(status: number, options: HttpErrorOptions = {}): HttpErrorStep {
  const { retryAfterMs, retryAfter, message, type, code, headers, ...rest } = options;
  const [defaultMessage, defaultType, defaultCode] = ERROR_DEFAULTS[status] ?? [`HTTP ${status}`, "server_error", `http_${status}`];
  const allHeaders: Record<string, string> = { ...headers };
  if (retryAfterMs !== undefined) allHeaders["retry-after-ms"] = String(retryAfterMs);
  if (retryAfter !== undefined) allHeaders["retry-after"] = String(retryAfter);
  return {
    ...rest,
    kind: "http_error",
    status,
    message: message ?? defaultMessage,
    type: type ?? defaultType,
    code: code ?? defaultCode,
    headers: allHeaders,
  };
}

export interface MidStreamErrorOptions extends StepOptions {
  /** Partial content sent before the failure. */
  text?: string;
  mode?: MidStreamMode;
  /** Error message of the error chunk. */
  message?: string;
  /** reset mode: wait this long after the partial text before cutting; default 200. */
  cutAfterMs?: number;
}

export function midStreamError(options: MidStreamErrorOptions = {}): MidStreamErrorStep {
  const { text: partial, mode, message, cutAfterMs, ...rest } = options;
  return {
    ...rest,
    kind: "mid_stream_error",
    text: partial ?? "Partial answer",
    mode: mode ?? "error-chunk",
    message: message ?? "Upstream stream failed",
    cutAfterMs: cutAfterMs ?? 200,
  };
}

/** 200 + SSE headers (and `text` if given), then nothing until the client goes away. */
export function hang(options: StepOptions & { text?: string } = {}): HangStep {
  return { ...options, kind: "hang" };
}

export function delay<S extends Step>(ms: number, step: S): S {
  return { ...step, delayMs: ms };
}

export function times<S extends Step>(n: number, step: S): S {
  if (!Number.isInteger(n) || n < 1) throw new Error(`times(n) needs a positive integer, got ${n}`);
  return { ...step, repeat: n };
}

/** One-line description, recorded on each request the step answered. */
export function describeStep(step: Step): string {
  const delayed = step.delayMs ? ` after ${step.delayMs}ms` : "";
  switch (step.kind) {
    case "text":
      return `${step.reasoning !== undefined ? "reasoning+text" : "text"}(${JSON.stringify(clip(step.text))})${delayed}`;
    case "tool_calls":
      return `toolCall(${step.calls.map((c) => c.name).join(", ")})${delayed}`;
    case "http_error":
      return `httpError(${step.status})${delayed}`;
    case "mid_stream_error":
      return `midStreamError(${step.mode})${delayed}`;
    case "hang":
      return `hang${delayed}`;
  }
}

function clip(s: string): string {
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
}
