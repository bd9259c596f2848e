// The turn summary: what a caller (or a calling model) needs to know about the last turn of a
// session, built from its messages. Pure, so it is unit-tested on recorded messages.
import type { AssistantMessageInfo, Message, Part, ToolPart } from "../model/message.js";
import { isAbsolute, relative, resolve } from "node:path";
import type { FileChange, FileDiff } from "../model/file-change.js";
import type { TurnTokens } from "../model/cost.js";
import type { MessageEvidence, TurnStatus, TurnVerdict } from "../model/turn-outcome.js";
import type { PendingRequest } from "../model/pending-request.js";
import { continuesTurn, evidenceOf, isCompactionSummary, recordedError } from "../model/evidence.js";
import { isTerminal, outcomeOf, turnUserIds } from "./record.js";
import { FILE_TOOLS, filePathOf } from "../model/file-tools.js";

export { FILE_TOOLS, filePathOf };

export type { FileChange, FileDiff, TurnStatus, TurnTokens };
export type Detail = "final" | "summary" | "full";
/** A model switch of the fallback watchdog (turns/fallback-watchdog.ts); also kept per session in the instance registry. */
export interface FallbackRecord {
  /** `provider/model` that failed. */
  from: string;
  to: string;
  reason: string;
  /** ISO time of the switch. */
  at: string;
}

type AnyError = NonNullable<AssistantMessageInfo["error"]>;

export interface TurnError {
  name: string;
  message: string;
  /** The provider's HTTP status, for an APIError. */
  statusCode?: number;
}

export interface ToolUse {
  tool: string;
  title?: string;
  status: string;
}

export interface TranscriptEntry {
  role: "user" | "assistant";
  text?: string;
  reasoning?: string;
  tools?: Array<ToolUse & { input?: unknown; output?: string; error?: string }>;
  error?: TurnError;
}

export interface TurnSummary {
  sessionId: string;
  status: TurnStatus;
  /** The agent's final answer (text of its last message in the turn). */
  answer: string;
  error?: TurnError;
  /** Requests that block the turn (status `blocked`). */
  pending?: PendingRequest[];
  model?: string;
  agent?: string;
  tools?: ToolUse[];
  files?: FileChange[];
  tokens?: TurnTokens;
  cost?: number;
  /** The user message that started the turn (use it with session diff/revert). */
  messageId?: string;
  transcript?: TranscriptEntry[];
  /** Model switches of the fallback watchdog during this turn (turns/fallback-watchdog.ts). */
  fallbacks?: FallbackRecord[];
}

export interface SummaryInput {
  sessionId: string;
  messages: Message[];
  /** How the wait ended; `idle` means the turn is over; `unreachable`: the server does not answer (say why in `unreachable`). */
  outcome: "idle" | "blocked" | "timeout" | "cancelled" | "unreachable";
  unreachable?: TurnError;
  pending?: PendingRequest[];
  /** Files seen edited while watching (non-git projects). */
  filesEdited?: Iterable<string>;
  /** The turn's diff (`session.diff?messageID=`, git projects only): it replaces the files from tool calls. */
  diff?: FileDiff[];
  /** How the turn ended as the turn machine decided it; else it is read from the messages. */
  verdict?: TurnVerdict;
  /**
   * The user message that started the turn `verdict` judges (TurnWatch.turnMessageId): the summary
   * describes that turn, even when a later message has started one of its own. Default: the last turn.
   */
  turn?: string;
  detail?: Detail;
}

/** A turn's messages: the prompt, the replies, and what automatic compactions spent on the way (summaries of the session, not replies). */
export interface TurnMessages {
  user?: Message;
  replies: Message[];
  compactions: Message[];
}

/** What places a message in a turn (the evidence's fields, without reading the rest of it). */
type Place = Pick<MessageEvidence, "id" | "role" | "parentId" | "continues" | "compaction">;

function placeOf(m: Message): Place {
  if (m.info.role === "user") return { id: m.info.id, role: "user", continues: m.parts.some(continuesTurn) };
  return { id: m.info.id, role: "assistant", parentId: m.info.parentID, compaction: isCompactionSummary(m.info) };
}

/** The turn the prompt at `index` starts; which messages carry it on is turns/record.ts's rule. */
function turnAt(messages: Message[], places: Place[], index: number): TurnMessages & { user: Message } {
  const ids = turnUserIds(places, places[index]!);
  const turn = { user: messages[index]!, replies: [] as Message[], compactions: [] as Message[] };
  places.forEach((p, i) => {
    if (p.role === "assistant" && p.parentId !== undefined && ids.has(p.parentId)) (p.compaction ? turn.compactions : turn.replies).push(messages[i]!);
  });
  return turn;
}

/** The turn started by user message `id`, if `messages` hold it. */
export function turnOf(messages: Message[], id: string): (TurnMessages & { user: Message }) | undefined {
  const index = messages.findIndex((m) => m.info.id === id && m.info.role === "user");
  return index < 0 ? undefined : turnAt(messages, messages.map(placeOf), index);
}

/** The last turn: the last prompt (not a message opencode added to carry a turn on) and what answers it. */
export function lastTurn(messages: Message[]): TurnMessages {
  const places = messages.map(placeOf);
  const index = places.findLastIndex((p) => p.role === "user" && !p.continues);
  if (index < 0) return { replies: messages.filter((_, i) => places[i]!.role === "assistant" && !places[i]!.compaction), compactions: [] };
  return turnAt(messages, places, index);
}

export function errorOf(error: AnyError | undefined): TurnError | undefined {
  return recordedError(error);
}

/** Why a turn whose session holds no message of it is `lost`, and what to do. */
export const NOTHING_RECORDED =
  "opencode is idle and recorded nothing of this turn: no user message, never seen busy. No prompt reached the session, or opencode accepted one and did not run it (e.g. an unknown agent), or restarted under it. Nothing is running; check the agent and model, then send the task again (opencode 2.x keeps a prompt it admitted and runs it before the next one: there, send only what is new).";

/**
 * The outcome of the session's last turn (or of the turn user message `turn` started) as its
 * messages record it, for a session known to be idle; undefined while that turn's last reply is not
 * terminal yet (its end may still be on its way).
 */
export function recordedVerdict(messages: Message[], turn?: string): TurnVerdict | undefined {
  const { user, replies } = (turn !== undefined ? turnOf(messages, turn) : undefined) ?? lastTurn(messages);
  const last = replies.at(-1);
  if (!last) {
    if (user) return { status: "lost", error: { name: "TurnLost", message: "opencode is idle and recorded no reply to the last message." } };
    // No message at all: no turn ran (opencode 1.18.33 records nothing of a prompt for an unknown agent).
    return { status: "lost", error: { name: "TurnLost", message: NOTHING_RECORDED } };
  }
  const record = evidenceOf(last);
  return isTerminal(record) ? outcomeOf(record, undefined) : undefined;
}

export function summarizeTurn(input: SummaryInput): TurnSummary {
  const { user, replies, compactions } = (input.turn !== undefined ? turnOf(input.messages, input.turn) : undefined) ?? lastTurn(input.messages);
  const last = replies.at(-1);
  const lastInfo = last?.info.role === "assistant" ? last.info : undefined;
  // The last words of the turn; an empty final step (an error, an abort) leaves the earlier text.
  const answer =
    replies
      .map((m) => textOf(m.parts))
      .filter(Boolean)
      .at(-1) ?? "";

  let status: TurnStatus;
  let error: TurnError | undefined;
  if (input.outcome === "blocked") status = "blocked";
  else if (input.outcome === "unreachable") [status, error] = ["unreachable", input.unreachable];
  else if (input.outcome !== "idle") status = "running";
  else {
    const verdict = input.verdict ??
      recordedVerdict(input.messages, input.turn) ?? { status: "lost", error: { name: "TurnLost", message: "opencode recorded no end of this turn." } };
    status = verdict.status;
    error = verdict.error;
  }

  const summary: TurnSummary = { sessionId: input.sessionId, status, answer };
  if (error) summary.error = error;
  if (input.pending && input.pending.length > 0) summary.pending = input.pending;
  if (input.detail === "final") return summary;

  // A reply known only from the events so far (2.x, the server not answering) may not name its model yet.
  const modelOf = (m: { providerID: string; modelID: string }) => (m.providerID && m.modelID ? `${m.providerID}/${m.modelID}` : undefined);
  // The turn's model and agent are its last reply's, a compaction's summary aside: a turn that failed
  // at an automatic compaction ends on it, and opencode writes it under its own agent (1.x
  // `compaction`) or none (2.x, engine/v2/v2-messages.ts).
  const named = replies.flatMap((m) => (m.info.role === "assistant" && m.info.summary !== true ? [m.info] : [])).at(-1) ?? lastInfo;
  const model = named ? modelOf(named) : user?.info.role === "user" ? modelOf(user.info.model) : undefined;
  if (model) summary.model = model;
  if (named) summary.agent = named.agent;
  else if (user?.info.role === "user") summary.agent = user.info.agent;
  summary.tools = replies.flatMap((m) => m.parts.flatMap((p) => (p.type === "tool" ? [toolUse(p)] : [])));
  summary.files = filesChanged(replies, input.filesEdited, input.diff);
  // What the turn spent includes its compactions' summaries.
  summary.tokens = sumTokens([...replies, ...compactions]);
  summary.cost = [...replies, ...compactions].reduce((sum, m) => sum + (m.info.role === "assistant" ? m.info.cost : 0), 0);
  if (user) summary.messageId = user.info.id;
  if (input.detail === "full") summary.transcript = [...(user ? [user] : []), ...replies].map(transcriptEntry);
  return summary;
}

function textOf(parts: Part[]): string {
  return parts
    .flatMap((p) => (p.type === "text" && !p.synthetic && !p.ignored ? [p.text] : []))
    .join("\n")
    .trim();
}

function toolUse(part: ToolPart): ToolUse {
  const state = part.state;
  const title = "title" in state && typeof state.title === "string" ? state.title : undefined;
  return { tool: part.tool, status: state.status, ...(title ? { title } : {}) };
}

/** Files of the turn, relative to the session's directory when inside it (absolute otherwise). */
function filesChanged(replies: Message[], edited: Iterable<string> | undefined, diff: FileDiff[] | undefined): FileChange[] {
  const where = replies.flatMap((m) => (m.info.role === "assistant" ? [m.info.path] : [])).at(-1);
  const show = (path: string) => {
    if (!where || !isAbsolute(path)) return path;
    const rel = relative(where.cwd, path);
    return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : path;
  };
  if (diff && diff.length > 0) {
    // Diff paths are relative to the worktree root.
    return diff.flatMap((d) =>
      d.file
        ? [
            {
              path: show(where ? resolve(where.root, d.file) : d.file),
              ...(d.status ? { status: d.status } : {}),
              ...(d.additions !== undefined ? { additions: d.additions, deletions: d.deletions } : {}),
            },
          ]
        : [],
    );
  }
  const paths = new Set<string>(edited ?? []);
  for (const m of replies) {
    for (const p of m.parts) {
      if (p.type === "tool" && p.state.status === "completed" && FILE_TOOLS.has(p.tool)) {
        const file = filePathOf(p.state.input, p.state.metadata);
        if (file) paths.add(file);
      }
      if (p.type === "patch") for (const f of p.files) paths.add(f);
    }
  }
  return [...new Set([...paths].map(show))].sort().map((path) => ({ path }));
}

function sumTokens(replies: Message[]): TurnTokens {
  const t: TurnTokens = { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
  for (const m of replies) {
    if (m.info.role !== "assistant") continue;
    const k = m.info.tokens;
    t.input += k.input;
    t.output += k.output;
    t.reasoning += k.reasoning;
    t.cacheRead += k.cache.read;
    t.cacheWrite += k.cache.write;
    t.total += k.total ?? k.input + k.output + k.reasoning + k.cache.read + k.cache.write;
  }
  return t;
}

const MAX_TOOL_OUTPUT = 2_000;

function transcriptEntry(m: Message): TranscriptEntry {
  const entry: TranscriptEntry = { role: m.info.role };
  const text = textOf(m.parts);
  if (text) entry.text = text;
  const reasoning = m.parts
    .flatMap((p) => (p.type === "reasoning" ? [p.text] : []))
    .join("\n")
    .trim();
  if (reasoning) entry.reasoning = reasoning;
  const tools = m.parts.flatMap((p) => {
    if (p.type !== "tool") return [];
    const s = p.state;
    return [
      {
        ...toolUse(p),
        input: s.input,
        ...(s.status === "completed" ? { output: clip(s.output) } : {}),
        ...(s.status === "error" ? { error: s.error } : {}),
      },
    ];
  });
  if (tools.length > 0) entry.tools = tools;
  if (m.info.role === "assistant" && m.info.error) entry.error = errorOf(m.info.error);
  return entry;
}

function clip(text: string): string {
  return text.length > MAX_TOOL_OUTPUT ? `${text.slice(0, MAX_TOOL_OUTPUT)}… (${text.length - MAX_TOOL_OUTPUT} more characters)` : text;
}
