// What an engine tells the turn machine (turns/machine.ts): its server's events, each read into one
// engine-neutral TurnEvent (engine/v1/v1-events.ts for opencode 1.x, engine/v2/v2-events.ts for
// 2.x), and how that engine's turns end. Both sides of the engine boundary speak it, so it lives here.
import type { MessageEvidence, RecordedError } from "./turn-outcome.js";

export type SessionActivity = "busy" | "retry" | "idle";

export type TurnEvent =
  | { type: "status"; status: SessionActivity }
  | { type: "message"; message: MessageEvidence }
  | { type: "message.removed"; id: string }
  /** An error the session reported (v1 `session.error`); some errors leave no assistant message. */
  | { type: "error"; error: RecordedError }
  /** An engine that states the outcome outright (opencode 2.x `session.execution.*`). */
  | { type: "outcome"; outcome: "succeeded" | "failed" | "interrupted"; error?: RecordedError }
  /** The server went away: no more evidence will come. */
  | { type: "lost"; error: RecordedError };

export interface TurnMachineOptions {
  /**
   * The engine states every outcome and one run can answer several prompts (opencode 2.x: an
   * execution ends with exactly one `session.execution.*`, and a prompt sent while it runs is
   * steered or queued into it). Then the loop moving on to a later prompt is no end of ours (that
   * prompt may have joined our run); the outcome event is, and it ends the turn of every prompt that
   * joined before it. A snapshot read while the session is idle is read as one run: the replies to
   * our prompt and to later ones, up to the first reply that did not ask for more (`tool-calls`).
   */
  statedOutcomes?: boolean;
}
