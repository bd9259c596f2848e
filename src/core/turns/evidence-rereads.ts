// When a watched session (turns/watch.ts) owes the turn machine evidence the event stream may never
// bring, a timer re-reads the server, and the second read in a row without it lets the watch give
// up (`lost`). Two debts: a session idle while its reply's end is not recorded yet (`settling`), and
// a prompt that opencode accepted but that has not been seen running (`waiting` while the session
// is not known busy). The second one is owed even when no event ever comes: opencode 1.18.33
// answers 204 to a prompt for an unknown agent and then only reports a session error (no user
// message, never busy, no idle), and a stream can miss the busy event. Once the session is seen
// working, the events are trusted again and nothing is re-read. Kept apart from the watch so the
// timing rules (how long a reply's end or a just-accepted prompt may take) sit in one place.
import type { SessionActivity, TurnPhase } from "./machine.js";

/** A prompt accepted this recently may still be about to turn busy (~0.6 s on a fresh instance, more under load). */
export const START_GRACE_MS = 10_000;
/** Idle with the reply not yet terminal: a failed turn's error lands within ~250 ms; after this, read again, then give up. */
export const SETTLE_MS = 2_000;

/** What a watch knows when it asks whether a re-read is owed. */
export interface EvidenceState {
  /** The session's activity as last told (undefined: nothing told it since the watch started). */
  activity: SessionActivity | undefined;
  phase: TurnPhase;
  /** When our prompt was sent (epoch ms; 0 when the watch attached to a turn it did not start). */
  promptedAt: number;
}

export class EvidenceRereads {
  private timer: NodeJS.Timeout | undefined;
  /** Re-reads in a row that found the session idle without evidence. */
  reads = 0;

  constructor(private readonly onDue: () => void) {}

  /** A prompt is about to go out: start the count over, and re-read on schedule until it is seen running. */
  prompted(state: EvidenceState): void {
    this.disarm();
    this.reads = 0;
    this.update(state);
  }

  /** Arms the re-read while evidence is owed (see the file comment); otherwise stops it and starts the count over. */
  update({ activity, phase, promptedAt }: EvidenceState): void {
    const working = activity === "busy" || activity === "retry";
    const owed = phase === "settling" || (phase === "waiting" && !working);
    if (!owed) {
      this.disarm();
      this.reads = 0;
      return;
    }
    if (this.timer) return;
    // settling: the reply's end is due within ms; waiting: a prompt accepted a moment ago may start yet.
    const ms = phase === "settling" ? SETTLE_MS : Math.max(SETTLE_MS, promptedAt + START_GRACE_MS - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.onDue();
    }, ms);
    this.timer.unref();
  }

  /** Stops the re-read; the next `update` may arm a new one. */
  disarm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
