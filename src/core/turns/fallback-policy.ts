// Model fallback policy (docs/opencode-behaviour.md §6): which models a task may switch to, how
// long a run of retries may last, and whether a turn's recorded error is the model's fault (so the
// next model should take over) or would fail any model. Pure decisions, no session I/O: the
// watchdog (turns/fallback-watchdog.ts) follows the turn and acts on them, and unit tests check
// them without a server.
import type { RecordedError } from "../model/turn-outcome.js";
import type { CoreContext } from "../context.js";
import { resolveModelRef } from "../catalog/models.js";
import { formatModel, type ModelRef } from "../catalog/model-resolve.js";
import { lastTurn, type FallbackRecord } from "./summary.js";
import type { Message } from "../model/message.js";
import type { TurnWatch } from "./watch.js";

export interface FallbackPlan {
  /** Model of the first attempt; undefined: the session's default (named from its messages). */
  model?: ModelRef;
  /** Models to switch to, in order. */
  fallbacks: ModelRef[];
  /** How long a run of retries may last before the switch. */
  retryTimeoutMs: number;
  /** Sends the original task again with `model` (same parts, agent, command). */
  resend(model: ModelRef, watch: TurnWatch): Promise<void>;
  agent?: string;
  /** Told each switch, with the model now in use. */
  onFallback?: (record: FallbackRecord, model: ModelRef) => void;
}

export const DEFAULT_RETRY_TIMEOUT_S = 90;

/** Resolves the fallback names up front (an unknown one is a UsageError now, not a surprise later), minus the task's model. */
export async function resolveFallbacks(ctx: CoreContext, names: string[], model: ModelRef | undefined): Promise<ModelRef[]> {
  const refs = await Promise.all(names.map((name) => resolveModelRef(ctx, name)));
  const seen = new Set(model ? [formatModel(model)] : []);
  return refs.filter((ref) => !seen.has(formatModel(ref)) && seen.add(formatModel(ref)));
}

export const CONTINUE_TEXT = "The previous model failed before finishing. Continue the task from where it stopped.";

/**
 * Why a turn's error should make the next model take over, or undefined when it should not: the
 * model or its provider failed (APIError of any status, an unknown model, missing credentials).
 * An abort, a context overflow or a length/content/output error would fail another model too.
 */
export function fallbackReason(e: RecordedError | undefined): string | undefined {
  if (!e) return undefined;
  if (e.name === "APIError") return `APIError${e.statusCode !== undefined ? ` ${e.statusCode}` : ""}: ${e.message}`;
  if (e.name === "ProviderAuthError") return `${e.name}: ${e.message}`;
  if (e.name === "UnknownError" && /model not found/i.test(e.message)) return `${e.name}: ${e.message}`;
  // opencode 2.x names the provider's failures `provider.*` (invalid-request for a 400, rate-limit, internal, …).
  if (e.name.startsWith("provider.") && !/context|length|content|output/i.test(e.name))
    return `${e.name}${e.statusCode !== undefined ? ` ${e.statusCode}` : ""}: ${e.message}`;
  return undefined;
}

/**
 * Times a run of retries. A run starts at its first `retry` status (busy between attempts does not
 * end it) and starts over when the attempt counter does (a later step failing anew) or after a
 * model step finished (`reset`).
 */
export class RetryClock {
  private since: number | undefined;
  private attempt = 0;
  constructor(readonly timeoutMs: number) {}

  /** Records a retry status; returns when the run will have lasted too long. */
  retry(attempt: number, now: number): number {
    if (this.since === undefined || attempt < this.attempt) this.since = now;
    this.attempt = attempt;
    return this.since + this.timeoutMs;
  }

  /** How long the current run has lasted (0 when none). */
  elapsed(now: number): number {
    return this.since === undefined ? 0 : now - this.since;
  }

  reset(): void {
    this.since = undefined;
    this.attempt = 0;
  }
}

/** True when a failed turn left nothing worth keeping: no tool call and no text. */
export function didNothing(replies: Message[]): boolean {
  return replies.every((m) => m.parts.every((p) => p.type === "step-start" || p.type === "step-finish" || (p.type === "text" && !p.text.trim())));
}

/** `provider/model` the turn ran with, from its messages (when the task named no model). */
export function modelOfTurn(messages: Message[]): string | undefined {
  const { user, replies } = lastTurn(messages);
  const last = replies.at(-1)?.info;
  if (last?.role === "assistant") return `${last.providerID}/${last.modelID}`;
  return user?.info.role === "user" ? `${user.info.model.providerID}/${user.info.model.modelID}` : undefined;
}

/** The error a summary shows when every model failed: each one with its reason. */
export function exhaustedError(failures: Array<{ model: string; reason: string }>): { name: string; message: string } {
  return { name: "AllModelsFailed", message: `All ${failures.length} models failed: ${failures.map((f) => `${f.model}: ${f.reason}`).join("; ")}` };
}
