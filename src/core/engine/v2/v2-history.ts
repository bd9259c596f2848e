// Reading a session's messages on opencode 2.x (`GET /api/session/{id}/message`,
// docs/opencode-2x-behaviour.md "Messages"): the last turn, the whole history page by page, one
// page before a cursor, and the files a turn changed. The server lists newest first unless asked
// for `order: asc`. This file exists so v2.ts stays the engine's outline; v2-messages.ts maps what
// is read here into the core's shapes.
import type { FileDiff } from "../../model/file-change.js";
import type { OpencodeV2Client } from "../../../client/v2/client.js";
import type { V2Message } from "./v2-messages.js";
import type { V2Page } from "./v2-sessions.js";
import { startsTurnV2 } from "./v2-subagent-notice.js";

/** Messages read to find the last turn; a longer turn reads them all. */
const TURN_PAGE = 50;
const ALL_PAGE = 200;

export async function lastTurnRawV2(client: OpencodeV2Client, id: string): Promise<V2Message[]> {
  const page = (await client.request("session.messages", { path: { sessionID: id }, query: { limit: String(TURN_PAGE) } })) as V2Page<V2Message>;
  const data = [...(page.data ?? [])].reverse();
  if (data.length < TURN_PAGE || data.some(startsTurnV2)) return data;
  return allRawV2(client, id);
}

export async function allRawV2(client: OpencodeV2Client, id: string): Promise<V2Message[]> {
  const out: V2Message[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 1000; i++) {
    const query = { order: "asc", limit: String(ALL_PAGE), ...(cursor ? { cursor } : {}) };
    const page = (await client.request("session.messages", { path: { sessionID: id }, query })) as V2Page<V2Message>;
    const data = page.data ?? [];
    out.push(...data);
    cursor = page.cursor?.next ?? undefined;
    if (data.length < ALL_PAGE || !cursor) break;
  }
  return out;
}

export async function newestMessageIdV2(client: OpencodeV2Client, id: string): Promise<string | undefined> {
  const page = (await client.request("session.messages", { path: { sessionID: id }, query: { limit: "1" } })) as V2Page<V2Message>;
  return page.data?.[0]?.id;
}

/** One page of messages, oldest first, and the cursor of the page before it when there may be one. */
export async function pageRawV2(
  client: OpencodeV2Client,
  id: string,
  o: { limit: number; before?: string },
): Promise<{ data: V2Message[]; nextBefore?: string }> {
  const query = { limit: String(o.limit), ...(o.before ? { cursor: o.before } : {}) };
  const page = (await client.request("session.messages", { path: { sessionID: id }, query })) as V2Page<V2Message>;
  const data = [...(page.data ?? [])].reverse(); // the server lists newest first
  const next = page.cursor?.next;
  return { data, ...(next && data.length === o.limit ? { nextBefore: next } : {}) };
}

/**
 * A turn's files. Where the server has the per-session diff (2.0.26: `GET /api/session/{id}/diff
 * ?from=<user message>`, the turn of that message), it gives each file with its line counts and
 * status. The pre-release has none: there the files each step changed (`snapshot.files`) come
 * without counts (no made-up zeros).
 */
export async function turnDiffV2(client: OpencodeV2Client, id: string, messageId: string): Promise<FileDiff[]> {
  if (client.routes.has("session.diff")) {
    // Three lines of context, as git shows a patch (without `context` 2.0.26 sends whole files).
    const page = (await client.request("session.diff", { path: { sessionID: id }, query: { from: messageId, context: "3" } })) as V2Page<V2FileDiff>;
    return (page.data ?? []).map((d) => ({ file: d.file, patch: d.patch, additions: d.additions, deletions: d.deletions, status: d.status }));
  }
  const raw = await allRawV2(client, id);
  const start = raw.findIndex((m) => m.id === messageId);
  if (start < 0) return [];
  const files = new Set<string>();
  for (const m of raw.slice(start + 1)) {
    if (startsTurnV2(m)) break;
    for (const f of m.snapshot?.files ?? []) files.add(f);
  }
  return [...files].sort().map((file) => ({ file }) as unknown as FileDiff);
}

/** 2.0.26's `FileDiff.Info`. */
interface V2FileDiff {
  file: string;
  patch: string;
  additions: number;
  deletions: number;
  status: "added" | "deleted" | "modified";
}
