// When a watched session (turns/watch.ts) owes the turn machine evidence the event stream may never
// bring, a timer re-reads the server, and the second read in a row without it lets the watch give
// up (`lost`). Two debts: a session idle while its reply's end is not recorded yet (`settling`), and
// a prompt that opencode accepted but that has not been seen running (`waiting` while the session
// is not known busy). The second one is owed even when no event ever comes: opencode 1.18.33
// answers 204 to a prompt for an unknown agent and then only reports a session error (no user
// message, never busy, no idle), and a stream can miss the busy event. Once the session is seen
// working, the events are trusted again and nothing is re-read. How long a start may take depends
// on what the session said since the prompt (START_GRACE_MS, SILENT_START_MS). Kept apart from the watch so the
// timing rules (how long a reply's end or a just-accepted prompt may take) sit in one place.
import type { SessionActivity } from "../model/turn-event.js";
import type { TurnPhase } from "./machine.js";

/**
 * A prompt accepted this recently may still be about to turn busy, though the session already said
 * something that could end it (an idle, a session error): ~0.6 s on a fresh instance, more under load.
 */
export const START_GRACE_MS = 10_000;
/**
 * The same when the session said nothing since the prompt, or only recorded our user message: on
 * 2 loaded cores (load 20) a prompt into a directory opencode had not opened yet went busy 9.3 s
 * after it was sent; reading earlier would risk calling a turn that is about to run `lost`.
 */
export const SILENT_START_MS = 30_000;
/** Idle with the reply not yet terminal: a failed turn's error lands within ~250 ms; after this, read again, then give up. */
export const SETTLE_MS = 2_000;

/** What a watch knows when it asks whether a re-read is owed. */
export interface EvidenceState {
  /** The session's activity as last told (undefined: nothing told it since the watch started). */
  activity: SessionActivity | undefined;
  phase: TurnPhase;
  /** When our prompt was sent (epoch ms; 0 when the watch attached to a turn it did not start). */
  promptedAt: number;
  /**
   * When an event said the session went idle, since the prompt. A prompt sent while another turn
   * ran (queued behind it) can only start then: its start grace counts from that idle, not from
   * the prompt (counted from the prompt, a loaded fresh-clone run called such a message's turn `lost`
   * seconds after the turn before it ended, and opencode then answered it).
   */
  idleSince?: number;
  /** The session reported an error since the watch started (e.g. 1.x `session.error` "Agent not found"). */
  errored: boolean;
}

export class EvidenceRereads {
  private timer: NodeJS.Timeout | undefined;
  /** When the armed timer fires (epoch ms). */
  private dueAt = 0;
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
  update({ activity, phase, promptedAt, idleSince, errored }: EvidenceState): void {
    const working = activity === "busy" || activity === "retry";
    const owed = phase === "settling" || (phase === "waiting" && !working);
    if (!owed) {
      this.disarm();
      this.reads = 0;
      return;
    }
    // settling: the reply's end is due within ms; waiting: a prompt accepted a moment ago may start
    // yet, the sooner expected to show it when the session said something that could end it.
    const now = Date.now();
    const grace = activity === "idle" || errored ? START_GRACE_MS : SILENT_START_MS;
    const startable = Math.max(promptedAt, idleSince ?? 0);
    const dueAt = phase === "settling" ? now + SETTLE_MS : Math.max(now + SETTLE_MS, startable + grace);
    // An armed read is never put off by later news, only brought forward (an error after a silent start).
    if (this.timer && this.dueAt <= dueAt) return;
    this.disarm();
    this.dueAt = dueAt;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.onDue();
    }, dueAt - now);
    this.timer.unref();
  }

  /** Stops the re-read; the next `update` may arm a new one. */
  disarm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
