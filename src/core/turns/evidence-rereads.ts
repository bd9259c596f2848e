// When a watched session (turns/watch.ts) sits idle while the turn machine still waits for the
// evidence of its end, the event stream may never bring it: a timer re-reads the server, and the
// second read in a row without evidence lets the watch give up (`lost`). Kept apart from the watch
// so the timing rules (how long a reply's end or a just-accepted prompt may take) sit in one place.
import type { TurnPhase } from "./machine.js";

/** A prompt accepted this recently may still be about to turn busy (~0.6 s on a fresh instance, more under load). */
const START_GRACE_MS = 10_000;
/** Idle with the reply not yet terminal: a failed turn's error lands within ~250 ms; after this, read again, then give up. */
const SETTLE_MS = 2_000;

export class EvidenceRereads {
  private timer: NodeJS.Timeout | undefined;
  /** Re-reads in a row that found the session idle without evidence. */
  reads = 0;

  constructor(private readonly onDue: () => void) {}

  /** Arms the re-read while the session is idle and the machine settles or waits; otherwise stops it and starts the count over. */
  update(idle: boolean, phase: TurnPhase, promptedAt: number): void {
    if (!idle || (phase !== "settling" && phase !== "waiting")) {
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

  /** Stops the re-read but keeps its handle: no new one is armed until the session is seen working (or the phase changes). */
  cancel(): void {
    clearTimeout(this.timer);
  }
}
