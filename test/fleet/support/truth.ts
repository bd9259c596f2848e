// Re-reads a session from the opencode that ran it, so a test compares a queued result with what
// opencode recorded (the prompt that started it, the last assistant text, the tokens of its
// replies, and the outcome its messages and status give by the rules of
// test/support/recorded-outcome.ts), and counts what the scripted model was asked, so "never
// prompted" is what the model saw.
import { Conductor } from "../../../src/core/conductor.js";
import type { TestOpencode } from "../../support/opencode.js";
import { turnOutcome, type MessageEvidence, type TurnOutcome } from "../../support/recorded-outcome.js";
import type { ScriptedModel } from "../../support/scripted-model.js";

export interface Recorded {
  prompt: string;
  answer: string;
  /** The last assistant message has ended (opencode set its completed time). */
  completed: boolean;
  error?: string;
  /** The tokens opencode recorded on the session's replies (each message's total, or the sum of its parts). */
  tokens: number;
  /** The session's tool calls: the tool, where opencode left it (completed, running …) and its output. */
  tools: Array<{ tool: string; status: string; output?: string }>;
}

export async function recorded(opencode: TestOpencode, sessionId: string, directory?: string): Promise<Recorded> {
  const c = new Conductor({ url: opencode.url, password: opencode.password, directory: directory ?? opencode.directory, queue: false });
  try {
    const messages = await c.client.call("session.messages", { path: { sessionID: sessionId } });
    const user = messages.find((m) => m.info.role === "user");
    const last = [...messages].reverse().find((m) => m.info.role === "assistant");
    const textOf = (m: (typeof messages)[number] | undefined) =>
      (m?.parts ?? []).flatMap((p) => (p.type === "text" && !("synthetic" in p && p.synthetic) ? [p.text] : [])).join("");
    const info = last?.info as { time?: { completed?: number }; error?: { name?: string } } | undefined;
    const tokens = messages.reduce((sum, m) => {
      if (m.info.role !== "assistant") return sum;
      const k = m.info.tokens;
      return sum + (k.total ?? k.input + k.output + k.reasoning + k.cache.read + k.cache.write);
    }, 0);
    const tools = messages.flatMap((m) =>
      m.parts.flatMap((p) => (p.type === "tool" ? [{ tool: p.tool, status: p.state.status, ...("output" in p.state ? { output: p.state.output } : {}) }] : [])),
    );
    return {
      prompt: textOf(user),
      answer: textOf(last).trim(),
      completed: info?.time?.completed !== undefined,
      ...(info?.error?.name ? { error: info.error.name } : {}),
      tokens,
      tools,
    };
  } finally {
    c.close();
  }
}

/** The model's chat requests whose conversation holds this prompt (titles excluded). */
export function chatRequestsWith(model: ScriptedModel, prompt: string): number {
  return model.requests.filter((r) => r.kind === "chat" && JSON.stringify(r.body.messages ?? []).includes(prompt)).length;
}

/** The outcome of the session's last turn as opencode recorded it (its messages, and whether it is idle). */
export async function recordedOutcome(opencode: TestOpencode, sessionId: string, directory?: string): Promise<TurnOutcome> {
  const c = new Conductor({ url: opencode.url, password: opencode.password, directory: directory ?? opencode.directory, queue: false });
  try {
    const status = (await c.client.call("session.status"))[sessionId];
    const messages = await c.client.call("session.messages", { path: { sessionID: sessionId } });
    const idle = status === undefined || status.type === "idle";
    return turnOutcome(messages as unknown as MessageEvidence[], { idle });
  } finally {
    c.close();
  }
}
