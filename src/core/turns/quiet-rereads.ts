// While someone waits on a running turn (turns/watch.ts) and the event stream is live (its data,
// heartbeats included, still comes) but tells nothing of the turn's sessions, a timer re-reads the
// server. A live stream may never carry what the turn did: opencode 1.18.33 under load was seen to
// send a stream it had just opened the first events of a resumed turn and then only heartbeats, not
// the turn's end, so a wait that trusted the stream alone held its caller until the caller's own
// timeout. The first read comes after QUIET_FIRST_MS without news, then at doubling delays up to
// QUIET_MAX_MS; any event of the sessions starts the count over. A read is due only on a stream
// known live: when nothing at all came since the quiet began, the next look comes after
// QUIET_FIRST_MS again, not doubled, the quiet still counted from its start. opencode 2.x sends its
// heartbeat every 15 s, more than QUIET_FIRST_MS: a sub-agent's model call quiet for longer than that
// was first re-read only after 30 s (the first look found no heartbeat yet and doubled the delay as
// if it had read); now by 20 s. Kept apart from the watch so the timing sits in one place.

/** Quiet this long while a wait runs: read the server (a missed end answers within about this). */
export const QUIET_FIRST_MS = 10_000;
/** The longest a quiet wait goes between two reads (a turn quiet on purpose: a model thinking for minutes). */
export const QUIET_MAX_MS = 60_000;

export class QuietRereads {
  private timer: NodeJS.Timeout | undefined;
  private delay = QUIET_FIRST_MS;
  private lastHeard = 0;
  private armed = false;

  /** When the quiet began: the last news of the turn, or the start of the wait (epoch ms). */
  get since(): number {
    return this.lastHeard;
  }

  constructor(private readonly onDue: () => void) {}

  /** A wait began: read after QUIET_FIRST_MS without news (already armed: nothing changes). */
  arm(): void {
    if (this.armed) return;
    this.armed = true;
    this.delay = QUIET_FIRST_MS;
    this.lastHeard = Date.now();
    this.start(this.delay);
  }

  /** The stream told something of the turn's sessions: the quiet starts over. */
  heard(): void {
    this.lastHeard = Date.now();
    this.delay = QUIET_FIRST_MS;
  }

  /** The read is done and the turn goes on: read again after a longer quiet. */
  again(): void {
    if (!this.armed) return;
    this.delay = Math.min(this.delay * 2, QUIET_MAX_MS);
    this.lastHeard = Date.now();
    this.start(this.delay);
  }

  /**
   * Due, but the stream brought no data at all since the quiet began (not known live): nothing was
   * read, so the delay does not grow; look again after QUIET_FIRST_MS, the quiet counted from its start.
   */
  notLive(): void {
    if (!this.armed) return;
    this.start(QUIET_FIRST_MS);
  }

  /** Nobody waits any more, or the turn ended. */
  disarm(): void {
    this.armed = false;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private start(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.due(), ms);
    this.timer.unref();
  }

  private due(): void {
    this.timer = undefined;
    if (!this.armed) return;
    // News came meanwhile: wait out the rest of the quiet since it (cheaper than a timer per event).
    const quietFor = Date.now() - this.lastHeard;
    if (quietFor < this.delay) return this.start(this.delay - quietFor);
    this.onDue();
  }
}
