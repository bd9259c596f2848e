// Follows a session's turn on the event stream and asks the turn machine (turns/machine.ts)
// whether opencode has recorded its end: an idle alone never ends a turn; on opencode 2.x the
// `session.execution.*` outcome event is the evidence. It is engine-neutral: the engine's
// translator (engine/v1/v1-signals.ts, engine/v2/v2-signals.ts) tells it what each event means. Subscribe
// before prompting. After a reconnect, or when attaching to a session someone else prompted, it
// re-reads the server and resyncs the machine; when the session stays idle without a recorded end,
// or a prompt is not seen running (opencode may accept one and never run it, saying nothing), timers
// re-read and then give up (`lost`, turns/evidence-rereads.ts); when the server's process is gone
// the turn is `lost` at once. When the server does not answer (hung, stopped, cut off) nobody knows
// how the turn goes: a wait running then answers `unreachable`, and the watch stays, so a later wait
// picks the turn up once the stream is back. What the caller is shown meanwhile lives apart: progress and files
// edited (turns/turn-progress.ts), the requests that block the turn (turns/pending-requests.ts),
// and how waits sleep and wake (turns/watch-wait.ts).
import type { RecordedError, TurnVerdict } from "../model/turn-outcome.js";
import { NotFoundError } from "../../client/errors.js";
import type { Engine, SessionTranslator, TurnSnapshot, WatchSignal } from "../engine/engine.js";
import { StreamFailedError, type EventSource, type HubEvent } from "../event-hub.js";
import type { Message } from "../model/message.js";
import { SeenMessages } from "./messages.js";
import { evidenceOf } from "../model/evidence.js";
import type { SessionActivity, TurnEvent, TurnMachineOptions } from "../model/turn-event.js";
import { TurnMachine } from "./machine.js";
import { NOTHING_RECORDED } from "./summary.js";
import { PendingRequests } from "./pending-requests.js";
import { EvidenceRereads } from "./evidence-rereads.js";
import { QuietRereads } from "./quiet-rereads.js";
import { TurnReport, type RetryStatus, type TurnProgress } from "./turn-progress.js";
import { settlesWithin, Wakeups, type TurnWaitOptions, type WaitOutcome } from "./watch-wait.js";

/** How soon a read that failed after a reconnect is tried again. */
const CATCH_UP_RETRY_MS = 2_000;

export interface TurnWatchOptions {
  onProgress?: (progress: TurnProgress) => void;
  /** Called on every session.status retry, e.g. by the fallback watchdog. */
  onRetry?: (status: RetryStatus) => void;
}

export class TurnWatch {
  /** Sessions whose requests block this one: itself and sub-agent children seen while watching. */
  readonly sessions: Set<string>;
  private readonly requests = new PendingRequests();
  readonly pending = this.requests.open;
  /** Progress, files edited and retry status, as the caller is shown them. */
  private readonly report: TurnReport;
  /** The session's last turn as known when its end was confirmed (the summary reuses it). */
  messages: Message[] | undefined;
  private failure: unknown;
  /** Set while the server does not answer (the hub said so); cleared once its stream is back. */
  private silence: RecordedError | undefined;
  /** The hub's "does not answer" notices so far: a wait running when one comes answers `unreachable`. */
  private silences = 0;
  /** The stream gave up while the server did not answer: this watch can follow nothing more. */
  private detached: RecordedError | undefined;
  /** Events were missed (a reconnect) and no read has made up for them yet: read again until one succeeds. */
  private owesRead = false;
  private catchUpTimer: NodeJS.Timeout | undefined;
  /** Resolves once the turn ended or the watch failed or detached (made on first use). */
  private settledOnce: Promise<void> | undefined;
  /** unknown: nobody told us whether a turn runs (attach on the first wait). */
  private state: "unknown" | "running" | "ended" = "unknown";
  /** Decides the end; created when the turn is known (our prompt, or the first read when attaching). */
  private machine: TurnMachine | undefined;
  private final: TurnVerdict | undefined;
  /** The session's messages as events told them since we subscribed (complete for a turn we prompted, on 1.x). */
  private readonly seen = new SeenMessages();
  private promptedAt = 0;
  private activity: SessionActivity | undefined;
  /** When `activity` was last told (epoch ms): what a session said before a prompt says nothing of that prompt. */
  private activityAt = 0;
  /** When a status event last said the session went idle (0 while it works): a queued prompt may start only then. */
  private idleSince = 0;
  /** Re-reads armed while the session is idle and the machine still waits for evidence. */
  private readonly rereads = new EvidenceRereads(() => this.wake.schedule(() => this.lookAgain()));
  /** Re-reads while a wait runs and the stream tells nothing of the turn (quiet-rereads.ts). */
  private readonly quiet = new QuietRereads(() => this.wake.schedule(() => this.quietRead()));
  /** Waits running on this watch now: the quiet re-reads run only while someone waits. */
  private waiters = 0;
  private readonly wake = new Wakeups();
  private readonly endListeners = new Set<() => void>();
  private unsubscribe: (() => void) | undefined;
  private closed = false;
  /** The hub it listens on: whether its stream is live (quiet re-reads). */
  private hub: EventSource | undefined;

  private constructor(
    private readonly engine: Engine,
    readonly sessionId: string,
    options: TurnWatchOptions,
    private readonly translator: SessionTranslator,
    private readonly machineOptions: TurnMachineOptions,
  ) {
    this.sessions = new Set([sessionId]);
    this.report = new TurnReport(options.onProgress, options.onRetry);
    // Engines that stream no whole messages (2.x) leave the summary to read the session.
    this.seen.complete = machineOptions.statedOutcomes !== true;
  }

  /** Where progress goes; swapped when another caller picks up a turn left running. */
  get onProgress(): ((progress: TurnProgress) => void) | undefined {
    return this.report.onProgress;
  }
  set onProgress(listener: ((progress: TurnProgress) => void) | undefined) {
    this.report.onProgress = listener;
  }

  get filesEdited(): Set<string> {
    return this.report.filesEdited;
  }

  get retry(): RetryStatus | undefined {
    return this.report.retry;
  }

  /** How the turn ended, as opencode recorded it (set once `ended`). */
  get verdict(): TurnVerdict | undefined {
    return this.final;
  }

  /**
   * The user message that started the turn the verdict is about (1.x; see TurnMachine). The session
   * may have moved on to a later message by the time the verdict comes (a message queued behind
   * this turn): a summary must describe this turn, not the session's last one.
   */
  get turnMessageId(): string | undefined {
    return this.machine?.turnMessageId;
  }

  /** Subscribes (and waits until the subscription is live) before the caller prompts. */
  static async start(engine: Engine, hub: EventSource, sessionId: string, options: TurnWatchOptions = {}): Promise<TurnWatch> {
    const kit = await engine.watchKit(sessionId);
    const watch = new TurnWatch(engine, sessionId, options, kit.translator, kit.machine);
    watch.hub = hub;
    watch.unsubscribe = await hub.subscribe(
      (event) => watch.onEvent(event),
      (error) => watch.streamFailed(error),
      (id) => watch.sessions.has(id),
    );
    return watch;
  }

  /** The project directory whose instance this watch reads. */
  get directory(): string | undefined {
    return this.engine.directory;
  }

  get ended(): boolean {
    return this.state === "ended";
  }

  /** True once the turn ended, the watch failed or it can follow nothing more: nothing more will happen. */
  get settled(): boolean {
    return this.state === "ended" || this.failure !== undefined || this.detached !== undefined;
  }

  /** Why the turn's outcome is unknown right now: the server does not answer (undefined: it does, as far as we know). */
  get unreachable(): RecordedError | undefined {
    return this.detached ?? this.silence;
  }

  /** The turn's messages as the events told them so far (what there is when the server cannot be read). */
  knownMessages(): Message[] {
    return this.seen.complete ? this.seen.list() : (this.translator.turnMessages?.({ partial: true }) ?? this.seen.list());
  }

  /**
   * Call right before sending a prompt. `after` is the newest message id before it (undefined for
   * a new session): idles that do not answer a later user message are ignored.
   */
  prompted(after?: string): void {
    this.state = "running";
    this.machine = new TurnMachine(after, this.machineOptions);
    this.report.sawBusy = false;
    this.promptedAt = Date.now();
    this.messages = undefined;
    // What the events told since we subscribed (the prompt's own messages) counts already.
    if (this.activity) this.machine.apply({ type: "status", status: this.activity });
    for (const m of this.seen.list()) this.machine.apply({ type: "message", message: evidenceOf(m) });
    // Until the session is seen working, re-read on schedule: opencode may accept a prompt and never run it.
    this.rereads.prompted(this.evidenceState(this.machine));
  }

  /** The server's process is gone: the turn's end will never be recorded. */
  lose(error: RecordedError): void {
    if (this.settled) return;
    // What the events told of the turn so far is all there will be: its server cannot be read.
    this.end(this.knownMessages(), { status: "lost", error });
  }

  /** The hub's stream gave up: a server that stopped answering leaves the outcome unknown; anything else is a failure. */
  private streamFailed(error: Error): void {
    if (this.settled) return;
    if (!(error instanceof StreamFailedError && error.unanswered)) return this.fail(error);
    this.detached = {
      name: "ServerUnreachable",
      message: `${error.message}. The turn's outcome is unknown and may still come: ask again with the session id.`,
    };
    this.rereads.disarm();
    this.settle();
  }

  /** Ends the wait with an error, e.g. when the prompt request itself failed. */
  fail(error: unknown): void {
    if (this.settled) return;
    this.failure = error;
    this.settle();
  }

  /** Runs `listener` once the turn ends or the watch fails (at once if it already did). */
  onSettled(listener: () => void): void {
    if (this.settled) listener();
    else this.endListeners.add(listener);
  }

  /** Stops watching; a wait still running on it answers `cancelled`. */
  close(): void {
    this.rereads.disarm();
    this.quiet.disarm();
    clearTimeout(this.catchUpTimer);
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.closed = true;
    this.wake.notify();
  }

  async wait(options: TurnWaitOptions = {}): Promise<WaitOutcome> {
    const returnOnBlocked = options.returnOnBlocked ?? true;
    const deadline = options.timeoutMs === undefined ? undefined : Date.now() + options.timeoutMs;
    const left = () => (deadline === undefined ? undefined : Math.max(0, deadline - Date.now()));
    const silences = this.silences;
    const attaching = this.state === "unknown";
    if (attaching) this.wake.schedule(() => this.attach().catch((error: unknown) => this.fail(error)));
    else if (this.owesRead) this.wake.schedule(() => this.catchUp());
    // Reads the checks make are bounded by the wait's time: a server that does not answer them must not hold the caller.
    if (!(await this.checkedWithin(left()))) return this.ended ? "idle" : "timeout";
    // Events cover what happens after our subscription; a request asked before it, or answered a
    // moment ago (its reply event may still be on the way), needs the server's list.
    if (returnOnBlocked && !this.settled && (attaching || this.pending.size > 0) && !(await settlesWithin(this.refreshPending(), left()))) return "timeout";

    this.waiters += 1;
    this.quiet.arm();
    try {
      while (true) {
        if (this.failure !== undefined) throw this.failure;
        if (this.state === "ended") return "idle";
        // The server stopped answering while we waited (or the stream gave up on it): the outcome is unknown.
        if (this.detached || this.silences !== silences) return "unreachable";
        if (returnOnBlocked && this.pending.size > 0) return "blocked";
        if (options.signal?.aborted || this.closed) return "cancelled";
        const ms = left();
        if (ms !== undefined && ms <= 0) return "timeout";
        await this.wake.sleep(ms, options.signal);
        if (!(await this.checkedWithin(left()))) return this.ended ? "idle" : "timeout";
      }
    } finally {
      this.waiters -= 1;
      if (this.waiters === 0) this.quiet.disarm();
    }
  }

  /**
   * A wait runs, the stream is live (data came since the quiet began) but told nothing of the turn:
   * what the server holds now, and its open requests. Only for a turn seen running: owed evidence has
   * its own re-reads (evidence-rereads.ts), and a stream that brings nothing at all is the hub's to
   * judge (a server that does not answer). The read runs apart from the wait's checks, so a server
   * that stops answering meanwhile cannot hold the wait; what it found is applied as a check.
   */
  private async quietRead(): Promise<void> {
    const live = (this.hub?.heardAt?.() ?? 0) > this.quiet.since;
    if (!this.machine || this.settled || this.closed || this.machine.phase !== "running") return this.quiet.again();
    // No data since the quiet began (2.x's heartbeat comes every 15 s): look again soon, the delay unchanged.
    if (!live) return this.quiet.notLive();
    void (async () => {
      try {
        const snap = await this.read();
        this.wake.schedule(async () => this.resync(snap));
        if (!this.settled) await this.refreshPending();
        this.wake.notify();
      } catch {
        // No answer is no news: the hub tells the waits when the server stops answering.
      } finally {
        if (!this.settled && !this.closed) this.quiet.again();
      }
    })();
  }

  /** The checks scheduled so far ran (or the watch settled meanwhile: a read still under way no longer matters), within `ms`. */
  private checkedWithin(ms: number | undefined): Promise<boolean> {
    this.settledOnce ??= new Promise<void>((resolve) => this.onSettled(resolve));
    return settlesWithin(Promise.race([this.wake.checked, this.settledOnce]), ms);
  }

  /** After missed events: what the server holds now. A read that fails is tried again shortly (nothing else would make up for the gap). */
  private async catchUp(): Promise<void> {
    clearTimeout(this.catchUpTimer);
    if (!this.owesRead || !this.machine || this.settled || this.closed) return;
    try {
      this.resync(await this.read());
      this.owesRead = false;
      await this.refreshPending();
    } catch (error) {
      if (!this.owesRead || this.settled || this.closed) return;
      // opencode answers, without the session (deleted, or a restart lost it): no end of this turn will ever be recorded.
      if (error instanceof NotFoundError)
        return this.lose({ name: "SessionGone", message: `opencode no longer has session ${this.sessionId}: no end of this turn will ever be recorded.` });
      this.catchUpTimer = setTimeout(() => this.wake.schedule(() => this.catchUp()), CATCH_UP_RETRY_MS);
      this.catchUpTimer.unref();
    }
  }

  /** Waiting on a session we did not prompt: its last turn, as the server holds it, is the one we follow. */
  private async attach(): Promise<void> {
    if (this.state !== "unknown") return;
    this.state = "running";
    // Joined midway: the events from here on miss what the turn streamed before (a text already
    // written), so they cannot describe it whole; the summary reads the session, as after a reconnect.
    this.seen.complete = false;
    const snap = await this.read();
    const { records, messages } = snap;
    // The last prompt: a message opencode added to carry a turn on (after a compaction) is not one.
    const lastUser = records.findLastIndex((m) => m.role === "user" && !m.continues);
    // No message at all: nothing ran yet, or opencode dropped the prompt (the re-reads give up on it).
    this.machine = new TurnMachine(lastUser > 0 ? records[lastUser - 1]!.id : undefined, this.machineOptions);
    const user = messages.findLast((m) => m.info.role === "user")?.info;
    this.promptedAt = user?.role === "user" ? user.time.created : 0;
    this.resync(snap);
  }

  /** What the server holds now: the session's activity and its last turn. */
  private async read(): Promise<TurnSnapshot> {
    const snap = await this.engine.snapshot(this.sessionId);
    if (snap.retry) this.report.retry = snap.retry;
    if (snap.activity !== "idle") this.report.sawBusy = true;
    return snap;
  }

  /** The session said what it is doing now (a status event). */
  private told(activity: SessionActivity): void {
    if (activity !== "idle") this.idleSince = 0;
    else if (this.activity !== "idle") this.idleSince = Date.now();
    [this.activity, this.activityAt] = [activity, Date.now()];
  }

  private resync(snap: TurnSnapshot): void {
    if (!this.machine || this.settled) return;
    // A read that finds the session working ends an idle; one that finds it idle is no news of when it went idle.
    if (snap.activity !== "idle") this.idleSince = 0;
    this.activity = snap.activity;
    this.activityAt = Date.now();
    this.machine.resync({ activity: snap.activity, messages: snap.records });
    this.afterEvidence(snap.messages);
  }

  /** Feeds one event to the machine and acts on what it decided. */
  private feed(event: TurnEvent): void {
    if (!this.machine || this.settled) return;
    this.machine.apply(event);
    this.afterEvidence();
  }

  /** Ends the watch on a verdict, or arms the re-read that looks for evidence an idle session owes us. */
  private afterEvidence(read?: Message[]): void {
    const machine = this.machine;
    if (!machine || this.settled) return;
    // Events after a reconnect miss what the gap held: then the summary reads the session itself.
    if (machine.verdict) return this.end(read ?? this.eventMessages(), machine.verdict);
    this.rereads.update(this.evidenceState(machine));
  }

  private evidenceState(machine: TurnMachine) {
    // A watch kept from an earlier turn knows that turn's idle: it must not shorten this prompt's grace.
    const told = this.activityAt >= this.promptedAt ? this.activity : undefined;
    const idleSince = told === "idle" && this.idleSince >= this.promptedAt ? this.idleSince : undefined;
    return { activity: told, phase: machine.phase, promptedAt: this.promptedAt, idleSince, errored: machine.errored };
  }

  /** The turn's messages as events told them, when they are known whole (else the summary reads the session). */
  private eventMessages(): Message[] | undefined {
    return this.seen.complete ? this.seen.list() : this.translator.turnMessages?.();
  }

  /** The session stayed idle without evidence: read it; the second time in a row, take what is there. */
  private async lookAgain(): Promise<void> {
    if (!this.machine || this.settled || this.closed) return;
    const snap = await this.read();
    const { activity, messages } = snap;
    this.rereads.reads += 1;
    this.resync(snap);
    if (this.settled || activity !== "idle" || this.rereads.reads < 2) return;
    this.rereads.disarm();
    const verdict = this.machine.giveUp({ name: "TurnLost", message: this.lostBecause(this.machine) });
    this.end(messages, verdict);
  }

  /** Why the re-reads gave up, and what to do. */
  private lostBecause(machine: TurnMachine): string {
    if (machine.started) return "opencode is idle but recorded no end of this turn (it may have restarted under it, or dropped a queued message).";
    const early = machine.failedBeforeStart;
    if (!early) return NOTHING_RECORDED;
    return `opencode admitted the prompt, but its run failed before the prompt became a message (${early.name}: ${early.message.slice(0, 200)}). Nothing is running, yet opencode keeps the prompt: it runs before the next prompt sent to this session. Fix the cause (agent, model), then send only what is new.`;
  }

  /**
   * Aborted (reason AnsweredElsewhere) once opencode reports request `id` answered, by whoever: a
   * handler asking a person (an MCP form) stops asking when the answer came from somewhere else.
   */
  answeredSignal(id: string): AbortSignal {
    return this.requests.answeredSignal(id);
  }

  /** The server's open requests; a sub-agent session found below ours (created before we subscribed, or in a gap) is followed from now on. */
  private async refreshPending(): Promise<void> {
    for (const id of await this.requests.refresh(this.engine, this.sessions)) this.sessions.add(id);
  }

  private end(messages: Message[] | undefined, verdict: TurnVerdict): void {
    if (this.settled) return;
    this.final = verdict;
    this.state = "ended";
    this.messages = messages;
    this.pending.clear();
    this.rereads.disarm();
    this.quiet.disarm();
    clearTimeout(this.catchUpTimer);
    this.settle();
  }

  private settle(): void {
    for (const listener of [...this.endListeners]) listener();
    this.endListeners.clear();
    this.wake.notify();
  }

  private onEvent(event: HubEvent): void {
    this.quiet.heard();
    if (event.type === "conductor.lost") return this.lose(event.properties.error);
    if (event.type === "conductor.unreachable") {
      if (this.settled) return;
      this.silence = event.properties.error;
      this.silences += 1;
      this.wake.notify();
      return;
    }
    if (event.type === "conductor.reconnected") {
      // The server answers again. Events were lost while the stream was down: read what it holds now.
      this.silence = undefined;
      this.seen.complete = false;
      this.translator.translate(event, this.sessions);
      this.owesRead = true;
      this.wake.schedule(() => this.catchUp());
      return;
    }
    for (const signal of this.translator.translate(event, this.sessions)) this.signal(signal);
  }

  /** Bookkeeping for the caller (messages seen, progress, the requests that block the turn), and evidence for the machine. */
  private signal(s: WatchSignal): void {
    switch (s.kind) {
      case "turn":
        if (s.event.type === "status") this.told(s.event.status);
        return this.feed(s.event);
      case "child":
        this.sessions.add(s.sessionId);
        return;
      case "busy":
        return this.report.busy(this.state === "running");
      case "retry":
        this.report.retried(s);
        this.wake.notify();
        return;
      case "step-finished":
        return;
      case "request":
        if (this.settled) return;
        this.pending.set(s.request.id, s.request);
        this.report.blocked(s.request);
        this.wake.notify();
        return;
      case "request-answered":
        return this.requests.replied(s.id);
      case "tool":
        return this.report.tool(s);
      case "seen-message":
        this.seen.message(s.info);
        return;
      case "seen-part":
        this.seen.part(s.part);
        return;
      case "seen-removed":
        this.seen.remove(s.messageId, s.partId);
        return;
    }
  }
}
