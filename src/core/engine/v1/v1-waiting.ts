// Where a prompt sent to a busy opencode 1.x session stands (docs/opencode-behaviour.md §3 "A prompt
// sent while a turn runs"): 1.x records its user message at once, and the running loop answers it
// with its next model call (after the current step), so it waits until an assistant message follows
// it. 1.x keeps no list to take it back from: it is never withdrawable.
import type { Message } from "../../model/message.js";
import type { SessionRunState } from "../../model/session.js";
import type { WaitingPrompt } from "../engine.js";

/** What an abort does to a prompt waiting behind the running turn on 1.x (measured, §3). */
export const V1_ON_INTERRUPT =
  "interrupting the session (oc_interrupt) stops the running turn and opencode then drops this message unanswered (it stays in the history; the next prompt's turn sees it)";

export function waitingPromptV1(state: SessionRunState, messages: Message[], after: string | undefined): WaitingPrompt | undefined {
  if (state.type === "idle") return undefined;
  const from = after === undefined ? 0 : messages.findIndex((m) => m.info.id === after) + 1;
  const ours = messages.slice(from).findIndex((m) => m.info.role === "user");
  // Not recorded yet (prompt_async answers before it writes the message): it still waits.
  if (ours === -1) return { withdrawable: false, onInterrupt: V1_ON_INTERRUPT };
  const answered = messages.slice(from + ours + 1).some((m) => m.info.role === "assistant");
  return answered ? undefined : { withdrawable: false, onInterrupt: V1_ON_INTERRUPT };
}
