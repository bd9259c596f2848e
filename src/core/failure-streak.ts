// A write made again and again (a heartbeat, a worker's advert) that fails is said once when it
// starts failing and once when it works again, not on every beat: an hour's Redis outage is two
// lines in a worker's log, not seven hundred. ioredis with maxRetriesPerRequest null (the fleet's
// connections) does not fail a command while Redis is away, it holds it until Redis is back; so a
// write that has not answered within `boundMs` counts as failed too, or an outage would never be
// said at all. The write itself is left to finish: if it lands later, that is the recovery.

/** An error's message for a log line: one line, bounded, with any URL's user and password masked. */
export function failureText(error: unknown, max = 300): string {
  const raw = error instanceof Error ? error.message : String(error);
  const masked = raw
    .replace(/([a-z][a-z0-9+.-]*:\/\/)[^\s/@]*@/gi, "$1***@")
    .replace(/\s+/g, " ")
    .trim();
  return masked.length > max ? `${masked.slice(0, max)}…` : masked || "(no message)";
}

export interface StreakFailure {
  /** When the streak began. */
  since: string;
  /** The first failure's message (failureText). */
  error: string;
  /** Writes failed in this streak so far. */
  failures: number;
}

export interface FailureStreakOptions {
  /** A write with no answer after this long counts as failed. */
  boundMs: number;
  /** What does not answer then, for the message (default "the store"). */
  from?: string;
  /** Why a write might not answer (e.g. the connection's last error), said with a write that timed out. */
  cause?: () => string | undefined;
}

export class FailureStreak {
  private streak?: StreakFailure;

  constructor(
    /** What is written, for the log: "advert of worker w1 (heartbeat)". */
    private readonly what: string,
    private readonly log: (line: string, state: "failing" | "recovered") => void,
    private readonly o: FailureStreakOptions,
  ) {}

  /** Failing now: since when, and why (undefined while the writes work). */
  get failing(): StreakFailure | undefined {
    return this.streak && { ...this.streak };
  }

  /** Runs one write; never throws (a failed beat must not stop the process), its failure is reported. */
  async run(write: () => Promise<unknown>): Promise<void> {
    let counted = false; // one write is one failure, whether it timed out, failed, or both
    const fail = (error: unknown) => {
      if (!counted) this.failed(error);
      counted = true;
    };
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        const cause = this.o.cause?.();
        fail(new Error(`no answer from ${this.o.from ?? "the store"} within ${formatMs(this.o.boundMs)}${cause ? ` (last connection error: ${cause})` : ""}`));
        resolve();
      }, this.o.boundMs);
      timer.unref();
    });
    // A write that answers after its bound still counts: its late success is the recovery.
    const written = Promise.resolve()
      .then(write)
      .then(
        () => this.worked(),
        (error: unknown) => fail(error),
      );
    await Promise.race([written, bound]);
    clearTimeout(timer);
  }

  private failed(error: unknown): void {
    if (this.streak) {
      this.streak.failures++;
      return;
    }
    this.streak = { since: new Date().toISOString(), error: failureText(error), failures: 1 };
    this.log(`${this.what} failed: ${this.streak.error} (said once until it works again)`, "failing");
  }

  private worked(): void {
    const s = this.streak;
    if (!s) return;
    this.streak = undefined;
    const lasted = formatMs(Date.now() - Date.parse(s.since));
    this.log(`${this.what} works again (${s.failures} failed write${s.failures === 1 ? "" : "s"} over ${lasted})`, "recovered");
  }
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`;
}
