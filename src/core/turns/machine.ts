// The turn state machine: it ends a turn only on evidence of what opencode recorded. It is pure
// (no I/O, no clock) and engine-neutral: an engine turns its server's events into TurnEvents
// (engine/v1/v1-events.ts for opencode 1.x, engine/v2/v2-events.ts for 2.x) and, after a reconnect or when attaching
// to a running session, hands it a snapshot read from the server. docs/architecture.md draws the
// states.
//
//   waiting ──(our user message, or any evidence)──▶ running ──(idle + terminal reply)──▶ ended
//      │                                                │ (idle, reply not terminal)
//      │                                                ▼
//      │                                             settling ──(reply turns terminal)──▶ ended
//      └──────────────────(server lost / no end will ever be recorded)──────────────────▶ lost
//
// Why not end at the first idle: on a failed turn opencode 1.18.33 goes idle once before the
// error lands on the assistant message and once after; aborting an idle session idles too; a
// prompt accepted a moment ago is not busy yet. Only a terminal reply to *our* user message,
// while the session is idle (or the loop has moved on to a later message), ends the turn.
import type { SessionActivity, TurnEvent, TurnMachineOptions } from "../model/turn-event.js";
import type { MessageEvidence, RecordedError, TurnVerdict } from "../model/turn-outcome.js";
import { isTerminal, outcomeOf, repliesTo, turnStart, turnUserIds } from "./record.js";

/** Where the machine is; `settling` and `waiting` tell the watcher which timer to arm. */
export type TurnPhase = "waiting" | "running" | "settling" | "ended";

export class TurnMachine {
  private readonly messages = new Map<string, MessageEvidence>();
  private activity: SessionActivity | undefined;
  private sessionError: RecordedError | undefined;
  private stated: Extract<TurnEvent, { type: "outcome" }> | undefined;
  private earlyFailure: RecordedError | undefined;
  private final: TurnVerdict | undefined;

  /** `after`: the newest message id before our prompt (undefined: the session had none). */
  constructor(
    private readonly after: string | undefined,
    private readonly options: TurnMachineOptions = {},
  ) {}

  get verdict(): TurnVerdict | undefined {
    return this.final;
  }

  get phase(): TurnPhase {
    if (this.final) return "ended";
    const list = this.list();
    const user = turnStart(list, this.after);
    if (!user) return "waiting";
    const last = this.lastOf(list, user);
    if (!last) return "waiting";
    return this.activity === "idle" ? "settling" : "running";
  }

  /**
   * A run that failed before our user message was known (2.x: an execution that failed without
   * promoting our prompt, e.g. an unknown agent). Not our outcome: only what the watch can tell.
   */
  get failedBeforeStart(): RecordedError | undefined {
    return this.user() ? undefined : this.earlyFailure;
  }

  /** The session reported an error (v1 `session.error`), whether or not a message carries it. */
  get errored(): boolean {
    return this.sessionError !== undefined;
  }

  /** opencode recorded our prompt (its user message is known): the turn is more than a request it accepted. */
  get started(): boolean {
    return this.user() !== undefined;
  }

  /**
   * The user message whose turn the verdict judges, where a reply answers exactly one user message
   * (1.x). Undefined on an engine that states outcomes (2.x): there a turn takes in what is steered
   * into it, so its last turn is the whole of it.
   */
  get turnMessageId(): string | undefined {
    return this.options.statedOutcomes ? undefined : this.user()?.id;
  }

  apply(event: TurnEvent): TurnVerdict | undefined {
    if (this.final) return this.final;
    switch (event.type) {
      case "status":
        this.activity = event.status;
        break;
      case "message":
        this.messages.set(event.message.id, event.message);
        break;
      case "message.removed":
        this.messages.delete(event.id);
        break;
      case "error":
        this.sessionError ??= event.error; // opencode repeats it, the second time with a stack trace
        break;
      case "outcome":
        // Only an outcome that comes once our user message is known is ours: one before it ends an
        // earlier run (our prompt starts or joins the next one).
        if (this.user()) this.stated = event;
        else if (event.outcome === "failed") this.earlyFailure = event.error; // kept only to say why, if nothing of ours follows
        break;
      case "lost":
        return (this.final = { status: "lost", error: event.error });
    }
    return this.decide();
  }

  /** What the server holds now (after a reconnect, or when attaching): replaces what events told. */
  resync(snapshot: { activity: SessionActivity; messages: readonly MessageEvidence[] }): TurnVerdict | undefined {
    if (this.final) return this.final;
    this.activity = snapshot.activity;
    this.messages.clear();
    for (const m of snapshot.messages) this.messages.set(m.id, m);
    return this.decide();
  }

  /**
   * The watcher's timers ran out: the session stayed idle and nothing more was recorded (the
   * server restarted under the turn, or dropped a queued message). What it has is all there is.
   */
  giveUp(error: RecordedError): TurnVerdict {
    if (this.final) return this.final;
    if (this.sessionError && this.activity === "idle" && !this.lastReply()) return (this.final = { status: "error", error: this.sessionError });
    return (this.final = { status: "lost", error });
  }

  private list(): MessageEvidence[] {
    return [...this.messages.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  private user(): MessageEvidence | undefined {
    return turnStart(this.list(), this.after);
  }

  private lastReply(): MessageEvidence | undefined {
    const list = this.list();
    const user = turnStart(list, this.after);
    return user ? this.lastOf(list, user) : undefined;
  }

  /** The reply that tells how our turn went so far (see TurnMachineOptions for a stating engine). */
  private lastOf(list: readonly MessageEvidence[], user: MessageEvidence): MessageEvidence | undefined {
    if (!this.options.statedOutcomes) return repliesTo(list, user).at(-1);
    let last: MessageEvidence | undefined;
    for (const m of list) {
      if (m.role !== "assistant" || m.parentId === undefined || m.parentId < user.id) continue;
      last = m;
      if (m.error || (m.finish !== undefined && m.finish !== "tool-calls")) break;
    }
    return last;
  }

  private decide(): TurnVerdict | undefined {
    const list = this.list();
    const user = turnStart(list, this.after);
    const last = user ? this.lastOf(list, user) : undefined;
    if (this.stated) {
      const error = this.stated.error ?? last?.error ?? this.sessionError;
      const status = this.stated.outcome === "succeeded" ? "done" : this.stated.outcome === "failed" ? "error" : "interrupted";
      return (this.final = { status, ...(error && status !== "done" ? { error } : {}) });
    }
    // The loop moved on to a later prompt: our turn is over even though it never idled. A message
    // opencode added to carry our turn on (after an automatic compaction) is no later prompt.
    const ours = user !== undefined && !this.options.statedOutcomes ? turnUserIds(list, user) : undefined;
    const movedOn =
      ours !== undefined &&
      list.some((m) => m.role === "assistant" && !m.compaction && m.parentId !== undefined && !ours.has(m.parentId) && m.parentId > user!.id);
    if (this.activity !== "idle" && !movedOn) return undefined;
    if (!last) {
      // Idle with no reply: an error that left no assistant message (an unknown model) ends it;
      // anything else is an idle that is not ours (the prompt has not started yet).
      if (user && this.sessionError && this.activity === "idle") return (this.final = { status: "error", error: this.sessionError });
      return undefined;
    }
    if (!isTerminal(last)) return undefined; // the error or the completion is still on its way
    return (this.final = outcomeOf(last, this.sessionError));
  }
}
