// What the matrix reads back from opencode to check an outcome, and how the scripted model calls
// tools, per major: 1.x answers the v1 routes (`session.messages` with `info`/`parts`, tools `write
// {filePath}` and `bash`), 2.x only the v2 API (messages with `type`/`content`, tools `write {path}`
// and `shell`; docs/opencode-2x-behaviour.md). The rows of matrix.test.ts stay the same for both.
import { connect } from "../../src/client/index.js";
import type { OpencodeMajor } from "../../src/client/detect.js";
import { connectV2 } from "../../src/client/v2/index.js";
import type { TestOpencode } from "../support/opencode.js";
import { turnOutcome, turnOutcomeV2, type MessageEvidence, type RecordedV2Message, type TurnOutcome } from "../support/recorded-outcome.js";
import { toolCall } from "../support/scripted-model.js";

export interface Oracle {
  major: OpencodeMajor;
  /**
   * What a truthful report of the session's last turn says, derived from the session re-read now
   * (its messages, whether it runs, its pending requests; test/support/recorded-outcome.ts).
   */
  turn(sessionId: string): Promise<TurnOutcome>;
  /** The text of the last assistant message opencode stored for a session. */
  storedAnswer(sessionId: string): Promise<string>;
  /** The id of the session's first user message. */
  firstUserMessageId(sessionId: string): Promise<string>;
  /** opencode's record of the session (its id), or an error when it has none. */
  sessionId(sessionId: string): Promise<string>;
  /**
   * The files opencode recorded as changed by the turn of a user message, sorted, with line counts
   * where it records them (1.x: `session.diff?messageID=`; 2.x: each step's `snapshot.files`, no counts).
   */
  turnFiles(sessionId: string, userMessageId: string): Promise<Array<{ file: string; additions?: number }>>;
  /** opencode's own revert of a session to a message (1.x: `session.revert`), called directly, not through the conductor. */
  revert(sessionId: string, messageId: string): Promise<void>;
  /** The message a staged revert goes back to, when there is one. */
  revertedTo(sessionId: string): Promise<string | undefined>;
  /** The name of the shell tool as the model and the conductor's tool list see it. */
  shellTool: "bash" | "shell";
  writeFile(file: string, content: string): ReturnType<typeof toolCall>;
  shell(command: string): ReturnType<typeof toolCall>;
}

export async function oracleFor(server: TestOpencode, major: OpencodeMajor): Promise<Oracle> {
  return major === 2 ? v2Oracle(server) : v1Oracle(server);
}

function v1Oracle(server: TestOpencode): Oracle {
  const client = connect({ url: server.url, password: server.password, directory: server.directory });
  const messages = (sessionId: string) => client.call("session.messages", { path: { sessionID: sessionId } });
  const pendingOf = async (sessionId: string) => {
    // Older releases lack the question routes: no question pending there.
    const [permissions, questions] = await Promise.all([client.call("permission.list").catch(() => []), client.call("question.list").catch(() => [])]);
    return [...permissions, ...questions].some((r) => r.sessionID === sessionId);
  };
  return {
    major: 1,
    async turn(sessionId) {
      const [list, status, pending] = await Promise.all([messages(sessionId), client.call("session.status"), pendingOf(sessionId)]);
      const idle = (status as Record<string, unknown>)[sessionId] === undefined;
      return turnOutcome(list as unknown as MessageEvidence[], { idle, pending });
    },
    async storedAnswer(sessionId) {
      const last = (await messages(sessionId)).filter((m) => m.info.role === "assistant").at(-1);
      return (last?.parts ?? []).map((p) => (p.type === "text" ? p.text : "")).join("");
    },
    async firstUserMessageId(sessionId) {
      return (await messages(sessionId)).find((m) => m.info.role === "user")!.info.id;
    },
    sessionId: async (sessionId) => (await client.call("session.get", { path: { sessionID: sessionId } })).id,
    async turnFiles(sessionId, userMessageId) {
      const diff = await client.call("session.diff", { path: { sessionID: sessionId }, query: { messageID: userMessageId } });
      return diff.flatMap((d) => (d.file ? [{ file: d.file, additions: d.additions }] : [])).sort((a, b) => a.file.localeCompare(b.file));
    },
    revertedTo: async (sessionId) => (await client.call("session.get", { path: { sessionID: sessionId } })).revert?.messageID,
    async revert(sessionId, messageId) {
      await client.call("session.revert", { path: { sessionID: sessionId }, body: { messageID: messageId } });
    },
    shellTool: "bash",
    writeFile: (file, content) => toolCall("write", { filePath: file, content }),
    shell: (command) => toolCall("bash", { command, description: "run a command" }),
  };
}

interface V2Message {
  id: string;
  type: string;
  content?: Array<{ type: string; text?: string }>;
  snapshot?: { files?: string[] };
}

async function v2Oracle(server: TestOpencode): Promise<Oracle> {
  const client = await connectV2({ url: server.url, password: server.password });
  const messages = async (sessionId: string) =>
    ((await client.request("session.messages", { path: { sessionID: sessionId }, query: { order: "asc", limit: "200" } })) as { data: V2Message[] }).data;
  const session = async (sessionId: string) =>
    ((await client.request("session.get", { path: { sessionID: sessionId } })) as { data: { id: string; revert?: { messageID?: string } } }).data;
  // 2.x asks questions as forms (`frm_` ids): a pending one is in form.list.
  const listed = async (route: "permission.list" | "question.list" | "form.list", sessionId: string) =>
    ((await client.request(route, { path: { sessionID: sessionId } }).catch(() => ({ data: [] }))) as { data?: unknown[] }).data ?? [];
  return {
    major: 2,
    async turn(sessionId) {
      const [list, active, permissions, questions, forms] = await Promise.all([
        messages(sessionId),
        client.request("session.active", {}) as Promise<{ data?: Record<string, unknown> }>,
        listed("permission.list", sessionId),
        listed("question.list", sessionId),
        listed("form.list", sessionId),
      ]);
      const pending = permissions.length + questions.length + forms.length > 0;
      return turnOutcomeV2(list as unknown as RecordedV2Message[], { idle: active.data?.[sessionId] === undefined, pending });
    },
    async storedAnswer(sessionId) {
      const last = (await messages(sessionId)).filter((m) => m.type === "assistant").at(-1);
      return (last?.content ?? []).map((c) => (c.type === "text" ? (c.text ?? "") : "")).join("");
    },
    async firstUserMessageId(sessionId) {
      return (await messages(sessionId)).find((m) => m.type === "user")!.id;
    },
    sessionId: async (sessionId) => (await session(sessionId)).id,
    async turnFiles(sessionId, userMessageId) {
      const all = await messages(sessionId);
      const after = all.slice(all.findIndex((m) => m.id === userMessageId) + 1);
      const end = after.findIndex((m) => m.type === "user");
      const steps = (end < 0 ? after : after.slice(0, end)).filter((m) => m.type === "assistant");
      return [...new Set(steps.flatMap((m) => m.snapshot?.files ?? []))].sort().map((file) => ({ file }));
    },
    revertedTo: async (sessionId) => (await session(sessionId)).revert?.messageID,
    async revert(sessionId, messageId) {
      await client.request("session.revert.stage", { path: { sessionID: sessionId }, body: { messageID: messageId } });
    },
    shellTool: "shell",
    writeFile: (file, content) => toolCall("write", { path: file, content }),
    shell: (command) => toolCall("shell", { command }),
  };
}
