// Budgets: a cap on the tokens and/or cost of a task (or of a parallel batch). The running total
// comes from `message.updated` events of the assistant messages of the tracked sessions (and their
// sub-agent sessions) seen since the budget started; when it passes a cap, every tracked session is
// aborted. A budget lives until the last turn it covers has settled, even if its caller returned.
import type { OpencodeClient } from "../../client/connect.js";
import type { Schemas } from "../../client/types.js";
import type { CoreContext } from "../context.js";
import type { EventSource, HubEvent } from "../event-hub.js";
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

/** Budgets by session, so a later wait on the session still reports `budget_exceeded`. */
const bySession = new WeakMap<EventSource, Map<string, Budget>>();
const REMEMBERED = 1_000;

export class Budget {
  private readonly counted = new Map<string, { tokens: number; cost: number; parent: string }>();
  private readonly roots = new Map<string, OpencodeClient>();
  private readonly sessions = new Set<string>();
  private unsubscribe: (() => void) | undefined;
  private holds = 1; // the owner's
  exceeded = false;

  private constructor(
    private readonly hub: EventSource,
    readonly caps: BudgetCaps,
  ) {}

  /** Undefined when no cap is set. Subscribes before the caller prompts. */
  static async start(ctx: Pick<CoreContext, "hub">, caps: BudgetCaps): Promise<Budget | undefined> {
    if (caps.maxTokens === undefined && caps.maxCostUsd === undefined) return undefined;
    const budget = new Budget(ctx.hub, caps);
    budget.unsubscribe = await ctx.hub.subscribe((event) => budget.onEvent(event));
    return budget;
  }

  /** The budget that covered the session's turn starting with user message `messageId`, if exceeded. */
  static exceededFor(ctx: Pick<CoreContext, "hub">, summary: TurnSummary): Budget | undefined {
    const budget = bySession.get(ctx.hub)?.get(summary.sessionId);
    return budget?.exceeded && summary.messageId && budget.covers(summary.messageId) ? budget : undefined;
  }

  /** Counts this session (and its sub-agents) from now on; `client` reaches its directory to abort it. */
  track(sessionId: string, client: OpencodeClient): void {
    this.roots.set(sessionId, client);
    this.sessions.add(sessionId);
    let map = bySession.get(this.hub);
    if (!map) bySession.set(this.hub, (map = new Map()));
    map.delete(sessionId);
    map.set(sessionId, this);
    if (map.size > REMEMBERED) map.delete(map.keys().next().value!);
    if (this.exceeded) void this.abort(sessionId, client);
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
  }

  get totals(): BudgetTotals {
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
    if (!this.exceeded || summary.status === "running" || summary.status === "blocked") return { ...summary, budget: this.totals };
    // The abort was ours: its MessageAbortedError says nothing the status does not.
    const { error, ...rest } = summary;
    return { ...(rest as T), ...(error && error.name !== "MessageAbortedError" ? { error } : {}), status: "budget_exceeded", budget: this.totals };
  }

  private covers(userMessageId: string): boolean {
    for (const m of this.counted.values()) if (m.parent === userMessageId) return true;
    return false;
  }

  private onEvent(event: HubEvent): void {
    if (event.type === "session.created" || event.type === "session.updated") {
      const info = event.properties.info;
      if (info.parentID && this.sessions.has(info.parentID)) this.sessions.add(info.id);
      return;
    }
    if (event.type !== "message.updated") return;
    const info = event.properties.info;
    if (info.role !== "assistant" || !this.sessions.has(info.sessionID)) return;
    this.counted.set(info.id, { tokens: tokensOf(info), cost: info.cost ?? 0, parent: info.parentID });
    const { tokens, cost } = this.totals;
    const over = (this.caps.maxTokens !== undefined && tokens > this.caps.maxTokens) || (this.caps.maxCostUsd !== undefined && cost > this.caps.maxCostUsd);
    if (!over || this.exceeded) return;
    this.exceeded = true;
    for (const [id, client] of this.roots) void this.abort(id, client);
  }

  private async abort(sessionId: string, client: OpencodeClient): Promise<void> {
    await client.call("session.abort", { path: { sessionID: sessionId } }).catch(() => undefined);
  }
}

function tokensOf(info: Schemas["AssistantMessage"]): number {
  const k = info.tokens;
  return k.total ?? k.input + k.output + k.reasoning + k.cache.read + k.cache.write;
}
