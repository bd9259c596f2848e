// Budgets fed by a fake hub: totals from assistant message updates of tracked sessions (and their
// sub-agents), an abort of every tracked session once a cap is passed, and the summary it yields.
import { describe, expect, it } from "vitest";
import type { OpencodeClient } from "../../../src/client/connect.js";
import { Budget } from "../../../src/core/governance/budget.js";
import { V1Engine } from "../../../src/core/engine/v1/v1-engine.js";
import type { EventSource, HubEvent, HubListener } from "../../../src/core/event-hub.js";

function fakes() {
  const listeners = new Set<HubListener>();
  const aborted: string[] = [];
  const hub: EventSource = {
    async subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  const client = {
    async call(id: string, args: { path: { sessionID: string } }) {
      if (id === "session.abort") aborted.push(args.path.sessionID);
      return true;
    },
  } as unknown as OpencodeClient;
  const emit = (type: string, properties: Record<string, unknown>) => {
    for (const l of [...listeners]) l({ type, properties } as unknown as HubEvent);
  };
  const assistant = (sessionID: string, id: string, total: number, cost = 0, parentID = "msg_u") =>
    emit("message.updated", {
      sessionID,
      info: { id, sessionID, parentID, role: "assistant", cost, tokens: { total, input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } } },
    });
  return { hub, client, engine: new V1Engine(client), emit, assistant, aborted, listeners };
}

describe("Budget", () => {
  it("is not started without a cap", async () => {
    const f = fakes();
    expect(await Budget.start({ hub: f.hub as never, engine: f.engine }, {})).toBeUndefined();
    expect(f.listeners.size).toBe(0);
  });

  it("sums the latest update of each message of tracked sessions and their children, aborting all once past the cap", async () => {
    const f = fakes();
    const budget = (await Budget.start({ hub: f.hub as never, engine: f.engine }, { maxTokens: 100 }))!;
    budget.track("ses_a", f.engine);
    budget.track("ses_b", f.engine);
    f.assistant("ses_a", "msg_1", 30);
    f.assistant("ses_a", "msg_1", 40); // the same message, updated: counted once
    f.assistant("ses_other", "msg_x", 1000); // not ours
    f.emit("session.created", { info: { id: "ses_child", parentID: "ses_b" } });
    f.assistant("ses_child", "msg_2", 50);
    expect(budget.totals).toMatchObject({ tokens: 90, exceeded: false });
    expect(f.aborted).toEqual([]);
    f.assistant("ses_b", "msg_3", 20);
    expect(budget.totals).toMatchObject({ tokens: 110, exceeded: true, maxTokens: 100 });
    expect(f.aborted.sort()).toEqual(["ses_a", "ses_b"]);
    // A session tracked after the cap passed is stopped at once.
    budget.track("ses_c", f.engine);
    await Promise.resolve();
    expect(f.aborted).toContain("ses_c");
  });

  it("caps cost too, and turns the aborted turn's summary into budget_exceeded", async () => {
    const f = fakes();
    const budget = (await Budget.start({ hub: f.hub as never, engine: f.engine }, { maxCostUsd: 0.5 }))!;
    budget.track("ses_a", f.engine);
    f.assistant("ses_a", "msg_1", 10, 0.6);
    const s = budget.apply({
      sessionId: "ses_a",
      status: "interrupted",
      answer: "",
      error: { name: "MessageAbortedError", message: "Aborted" },
      messageId: "msg_u",
    });
    expect(s).toEqual({
      sessionId: "ses_a",
      status: "budget_exceeded",
      answer: "",
      messageId: "msg_u",
      budget: { tokens: 10, cost: 0.6, exceeded: true, maxCostUsd: 0.5 },
    });
    expect(Budget.exceededFor({ hub: f.hub as never }, { sessionId: "ses_a", status: "interrupted", answer: "", messageId: "msg_u" })).toBe(budget);
    expect(Budget.exceededFor({ hub: f.hub as never }, { sessionId: "ses_a", status: "done", answer: "", messageId: "msg_later" })).toBeUndefined();
  });

  it("stops listening once the owner and every hold are released", async () => {
    const f = fakes();
    const budget = (await Budget.start({ hub: f.hub as never, engine: f.engine }, { maxTokens: 1 }))!;
    const release = budget.hold();
    budget.release();
    expect(f.listeners.size).toBe(1);
    release();
    release(); // twice is harmless
    expect(f.listeners.size).toBe(0);
  });
});
