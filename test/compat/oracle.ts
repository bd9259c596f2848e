// What the matrix reads back from opencode to check an outcome, and how the scripted model calls
// tools, per major: 1.x answers the v1 routes (`session.messages` with `info`/`parts`, tools `write
// {filePath}` and `bash`), 2.x only the v2 API (messages with `type`/`content`, tools `write {path}`
// and `shell`; docs/opencode-2x-behaviour.md). The rows of matrix.test.ts stay the same for both.
import { connect } from "../../src/client/index.js";
import type { OpencodeMajor } from "../../src/client/detect.js";
import { connectV2 } from "../../src/client/v2/index.js";
import type { TestOpencode } from "../support/opencode.js";
import { toolCall } from "../support/scripted-model.js";

export interface Oracle {
  major: OpencodeMajor;
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
  return {
    major: 1,
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
  return {
    major: 2,
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
    shellTool: "shell",
    writeFile: (file, content) => toolCall("write", { path: file, content }),
    shell: (command) => toolCall("shell", { command }),
  };
}
