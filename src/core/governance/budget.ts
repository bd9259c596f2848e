// Budgets: a cap on the tokens and/or cost of a task (or of a parallel batch). The running total
// comes from the usage the engine reads off the event stream (1.x `message.updated`, 2.x
// `session.step.ended`) for the tracked sessions (and their sub-agent sessions) since the budget started; when it passes a cap, every tracked session is
// aborted. A budget lives until the last turn it covers has settled, even if its caller returned.
// A batch spread over several processes (the fleet's workers) shares its total through a
// `SharedSpend` (queue/batch-budget.ts): each process reports its messages' usage and gets the
// batch's total back, and hears when another process found the batch over its cap.
import type { CoreContext } from "../context.js";
import type { Engine, UsageSignal } from "../engine/engine.js";
import type { EventSource } from "../event-hub.js";
import type { TurnSummary } from "../turns/summary.js";

export interface BudgetCaps {
  maxTokens?: number;
  maxCostUsd?: number;
}

export interface BudgetTotals extends BudgetCaps {
  tokens: number;
  cost: number;
  exceeded: boolean;
}

/** A total kept outside this process (e.g. in Redis for a batch on the fleet). */
export interface SharedSpend {
  /** Reports a message's usage so far (it replaces that message's earlier report); answers the shared total. */
  report(messageId: string, tokens: number, cost: number): Promise<{ tokens: number; cost: number; exceeded: boolean }>;
  /** The shared total now. */
  read(): Promise<{ tokens: number; cost: number; exceeded: boolean }>;
  /** Marks the shared total as over its cap, for every process that shares it. */
  exceed(): Promise<void>;
  /** Calls `f` when another process marked the total as over its cap. */
  onExceeded(f: () => void): Promise<() => void>;
}

/** Budgets by session, so a later wait on the session still reports `budget_exceeded`. */
const bySession = new WeakMap<EventSource, Map<string, Budget>>();
const REMEMBERED = 1_000;

export class Budget {
  private readonly counted = new Map<string, { tokens: number; cost: number; parent?: string }>();
  private readonly roots = new Map<string, Engine>();
  private readonly sessions = new Set<string>();
  private unsubscribe: (() => void) | undefined;
  private unshare: (() => void) | undefined;
  private holds = 1; // the owner's
  /** The shared total as last answered (with a SharedSpend). */
  private sharedTotal?: { tokens: number; cost: number };
  exceeded = false;

  private constructor(
    private readonly hub: EventSource,
    readonly caps: BudgetCaps,
    private readonly shared?: SharedSpend,
  ) {}

  /** Undefined when no cap is set. Subscribes before the caller prompts. */
  static async start(ctx: Pick<CoreContext, "hub" | "engine">, caps: BudgetCaps, shared?: SharedSpend): Promise<Budget | undefined> {
    if (caps.maxTokens === undefined && caps.maxCostUsd === undefined) return undefined;
    const budget = new Budget(ctx.hub, caps, shared);
    const usage = await ctx.engine.usageTranslator();
    budget.unsubscribe = await ctx.hub.subscribe(
      (event) => {
        for (const signal of usage.translate(event)) budget.onUsage(signal);
      },
      undefined,
      (id) => budget.sessions.has(id),
    );
    if (shared) {
      budget.unshare = await shared.onExceeded(() => budget.exceed());
      // Spent before this process joined (another worker's tasks): nothing here may start.
      const now = await shared.read();
      budget.sharedTotal = { tokens: now.tokens, cost: now.cost };
      if (now.exceeded) budget.exceeded = true;
    }
    return budget;
  }

  /** The budget that covered the session's turn starting with user message `messageId`, if exceeded. */
  static exceededFor(ctx: Pick<CoreContext, "hub">, summary: TurnSummary): Budget | undefined {
    const budget = bySession.get(ctx.hub)?.get(summary.sessionId);
    return budget?.exceeded && summary.messageId && budget.covers(summary.messageId) ? budget : undefined;
  }

  /** Counts this session (and its sub-agents) from now on; `engine` reaches its directory to abort it. */
  track(sessionId: string, engine: Engine): void {
    this.roots.set(sessionId, engine);
    this.sessions.add(sessionId);
    let map = bySession.get(this.hub);
    if (!map) bySession.set(this.hub, (map = new Map()));
    map.delete(sessionId);
    map.set(sessionId, this);
    if (map.size > REMEMBERED) map.delete(map.keys().next().value!);
    if (this.exceeded) void this.abort(sessionId, engine);
  }

  /** Keeps the budget watching until the returned function is called (e.g. when a turn settles). */
  hold(): () => void {
    this.holds += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.release();
    };
  }

  /** The owner's release; the subscription ends once every hold is released. */
  release(): void {
    this.holds -= 1;
    if (this.holds > 0) return;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.unshare?.();
    this.unshare = undefined;
  }

  get totals(): BudgetTotals {
    if (this.sharedTotal) return { ...this.sharedTotal, exceeded: this.exceeded, ...this.caps };
    let tokens = 0;
    let cost = 0;
    for (const m of this.counted.values()) {
      tokens += m.tokens;
      cost += m.cost;
    }
    return { tokens, cost, exceeded: this.exceeded, ...this.caps };
  }

  /** A summary of a turn this budget stopped: status `budget_exceeded`, with the totals. */
  apply<T extends TurnSummary>(summary: T): T & { budget: BudgetTotals } {
    // Still going, or not known (the server does not answer): the stop is not confirmed yet.
    if (!this.exceeded || summary.status === "running" || summary.status === "blocked" || summary.status === "unreachable")
      return { ...summary, budget: this.totals };
    // The abort was ours: its MessageAbortedError says nothing the status does not.
    const { error, ...rest } = summary;
    return { ...(rest as T), ...(error && error.name !== "MessageAbortedError" ? { error } : {}), status: "budget_exceeded", budget: this.totals };
  }

  private covers(userMessageId: string): boolean {
    for (const m of this.counted.values()) if (m.parent === userMessageId) return true;
    return false;
  }

  private onUsage(signal: UsageSignal): void {
    if (signal.kind === "child") {
      if (this.sessions.has(signal.parentId)) this.sessions.add(signal.sessionId);
      return;
    }
    if (!this.sessions.has(signal.sessionId)) return;
    this.counted.set(signal.messageId, { tokens: signal.tokens, cost: signal.cost, parent: signal.parentId });
    if (this.shared) {
      // The batch's total is the one in the shared store; it answers with every process's spend.
      void this.shared.report(signal.messageId, signal.tokens, signal.cost).then(
        (total) => {
          this.sharedTotal = { tokens: total.tokens, cost: total.cost };
          if (this.over(total)) void this.shared!.exceed().catch(() => undefined);
          if (this.over(total) || total.exceeded) this.exceed();
        },
        () => undefined, // the store is away: counted again with the message's next report
      );
      return;
    }
    if (this.over(this.totals)) this.exceed();
  }

  private over(t: { tokens: number; cost: number }): boolean {
    return (this.caps.maxTokens !== undefined && t.tokens > this.caps.maxTokens) || (this.caps.maxCostUsd !== undefined && t.cost > this.caps.maxCostUsd);
  }

  /** Over the cap: every tracked session is aborted (once). */
  private exceed(): void {
    if (this.exceeded) return;
    this.exceeded = true;
    for (const [id, engine] of this.roots) void this.abort(id, engine);
  }

  private async abort(sessionId: string, engine: Engine): Promise<void> {
    await engine.abort(sessionId).catch(() => undefined);
  }
}
