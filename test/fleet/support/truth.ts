// Re-reads a session from the opencode that ran it, so a test compares a queued result with what
// opencode recorded (the prompt that started it and the last assistant text).
import { Conductor } from "../../../src/core/conductor.js";
import type { TestOpencode } from "../../support/opencode.js";

export interface Recorded {
  prompt: string;
  answer: string;
  /** The last assistant message has ended (opencode set its completed time). */
  completed: boolean;
  error?: string;
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
    return {
      prompt: textOf(user),
      answer: textOf(last).trim(),
      completed: info?.time?.completed !== undefined,
      ...(info?.error?.name ? { error: info.error.name } : {}),
    };
  } finally {
    c.close();
  }
}
