// What the caller of a watched turn (turns/watch.ts) is shown while it runs: progress lines, the
// files edited and the model's retry status. Kept apart from the watch, whose job is deciding when
// the turn ended; this only turns the engine's signals into what a person reads.
import type { WatchSignal } from "../engine/engine.js";
import { describeRequest, type PendingRequest } from "../model/pending-request.js";

export type TurnProgress =
  | { kind: "busy"; message: string }
  | { kind: "tool"; tool: string; status: "running" | "completed" | "error"; title?: string; message: string }
  | { kind: "file"; file: string; message: string }
  | { kind: "retry"; attempt: number; nextAt: number; reason: string; message: string }
  | { kind: "fallback"; from: string; to: string; reason: string; message: string }
  | { kind: "blocked"; request: PendingRequest; message: string };

export interface RetryStatus {
  attempt: number;
  message: string;
  next: number;
}

export class TurnReport {
  readonly filesEdited = new Set<string>();
  retry: RetryStatus | undefined;
  sawBusy = false;

  constructor(
    /** Where progress goes; swapped when another caller picks up a turn left running. */
    public onProgress: ((progress: TurnProgress) => void) | undefined,
    private readonly onRetry: ((status: RetryStatus) => void) | undefined,
  ) {}

  emit(p: TurnProgress): void {
    try {
      this.onProgress?.(p);
    } catch {
      // a failing progress consumer must not break the wait
    }
  }

  /** The session works; `running`: on a turn we know of (the first busy is worth a line). */
  busy(running: boolean): void {
    if (!this.sawBusy && running) this.emit({ kind: "busy", message: "working" });
    this.sawBusy = true;
    this.retry = undefined;
  }

  retried(s: RetryStatus): void {
    this.sawBusy = true;
    this.retry = { attempt: s.attempt, message: s.message, next: s.next };
    const inS = Math.max(0, Math.round((s.next - Date.now()) / 1000));
    this.emit({
      kind: "retry",
      attempt: s.attempt,
      nextAt: s.next,
      reason: s.message,
      message: `model error, retry ${s.attempt} in ${inS}s: ${s.message}`,
    });
    this.onRetry?.(this.retry);
  }

  blocked(request: PendingRequest): void {
    this.emit({ kind: "blocked", request, message: `waiting for an answer: ${describeRequest(request)}` });
  }

  tool(s: Extract<WatchSignal, { kind: "tool" }>): void {
    this.emit({ kind: "tool", tool: s.tool, status: s.status, title: s.title, message: `${s.tool} ${s.status}${s.title ? `: ${s.title}` : ""}` });
    if (s.file && !this.filesEdited.has(s.file)) {
      this.filesEdited.add(s.file);
      this.emit({ kind: "file", file: s.file, message: `edited ${s.file}` });
    }
  }
}
