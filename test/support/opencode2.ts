// Starts a real opencode 2.x server for e2e tests, the same way startOpencode() starts 1.x (temp
// HOME/XDG, temp project, offline config pointing at the scripted model, password, free port,
// pid registry): only the binary differs. The binary is built from the vendored source on first use
// (see opencode2-build.ts) or taken from OPENCODE2_BIN.
import { connectV2, type OpencodeV2Client } from "../../src/client/v2/index.js";
import { startOpencode, type StartOpencodeOptions, type TestOpencode } from "./opencode.js";
import { prepareOpencode2 } from "./opencode2-build.js";
import { recordEvents, type EventLog } from "./v2-events.js";

export { OPENCODE2_SOURCE_VERSION, prepareOpencode2 } from "./opencode2-build.js";

export async function startOpencode2(options: Omit<StartOpencodeOptions, "binary"> = {}): Promise<TestOpencode> {
  const { binary } = await prepareOpencode2();
  return startOpencode({ ...options, binary });
}

export interface V2Fixture {
  server: TestOpencode;
  client: OpencodeV2Client;
  /** Every event since the fixture started. */
  log: EventLog;
  /** Creates a session, returns its id. */
  newSession(title?: string): Promise<string>;
  /** The session's messages as the server records them, oldest first. */
  messages(sessionID: string): Promise<V2Message[]>;
  stop(): Promise<void>;
}

/** Loose shape of a 2.x message (`GET /api/session/{id}/message`). */
export interface V2Message {
  id: string;
  type: "user" | "assistant" | string;
  text?: string;
  finish?: string;
  error?: { type: string; message: string; status?: number };
  content?: Array<{
    type: string;
    text?: string;
    name?: string;
    state?: { status: string; input?: unknown; content?: unknown; metadata?: Record<string, unknown> };
  }>;
  [key: string]: unknown;
}

/** A 2.x server, a v2 client connected to it and a running event log. */
export async function startV2Fixture(options: Omit<StartOpencodeOptions, "binary"> = {}): Promise<V2Fixture> {
  const server = await startOpencode2(options);
  try {
    const client = await connectV2({ url: server.url, password: server.password });
    const log = await recordEvents(client);
    return {
      server,
      client,
      log,
      async newSession(title) {
        const created = (await client.request("session.create", { body: title ? { title } : {} })) as { data: { id: string } };
        return created.data.id;
      },
      async messages(sessionID) {
        // One page holds every message of these short test sessions.
        const page = (await client.request("session.messages", { path: { sessionID }, query: { order: "asc", limit: "200" } })) as { data: V2Message[] };
        return page.data;
      },
      async stop() {
        log.stop();
        await server.stop();
      },
    };
  } catch (error) {
    await server.stop();
    throw error;
  }
}
