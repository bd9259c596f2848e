// Session actions on opencode 2.x (docs/opencode-2x-behaviour.md): create, read, list, rename,
// remove, fork, revert, compact and per-session rules, each by its route adapter name, with 2.x
// sessions mapped into the core's Session. This file exists so v2.ts stays the engine's
// outline; the route's own body properties say what the server accepts (routes.ts), no version test.
import type { Session } from "../../model/session.js";
import type { OpencodeV2Client } from "../../../client/v2/client.js";
import { rulesV2 } from "./v2-guard-rails.js";
import type { PermissionRule } from "../../policy/permissions.js";
import { UnsupportedOnEngineError, type NewSession } from "../engine.js";
import { sessionModel } from "../session-model.js";
import { modelRefV2 } from "./v2-prompts.js";

interface V2Session {
  id: string;
  title?: string;
  parentID?: string;
  location?: { directory?: string };
  time?: { created?: number; updated?: number };
  cost?: number;
  tokens?: { input?: number; output?: number; reasoning?: number; cache?: { read?: number; write?: number } };
  revert?: { messageID?: string };
  model?: { id?: string; providerID?: string; variant?: string };
  agent?: string;
}

/** A 2.x list response: one page and the cursors around it. */
export interface V2Page<T> {
  data?: T[];
  cursor?: { previous?: string | null; next?: string | null };
}

/** The payload of a 2.x `{data}` response. */
export const dataOf = <T>(response: unknown): T => (response as { data: T }).data;

export function sessionOfV2(s: V2Session): Session {
  const t = s.tokens;
  return {
    id: s.id,
    title: s.title ?? "",
    directory: s.location?.directory ?? "",
    ...(s.parentID ? { parentId: s.parentID } : {}),
    time: { created: s.time?.created ?? 0, updated: s.time?.updated ?? s.time?.created ?? 0 },
    ...(s.cost !== undefined ? { cost: s.cost } : {}),
    ...(t
      ? { tokens: { input: t.input ?? 0, output: t.output ?? 0, reasoning: t.reasoning ?? 0, cacheRead: t.cache?.read ?? 0, cacheWrite: t.cache?.write ?? 0 } }
      : {}),
    ...(s.revert?.messageID ? { revert: { messageId: s.revert.messageID } } : {}),
    ...sessionModel(s.model),
    ...(s.agent ? { agent: s.agent } : {}),
  };
}

const NO_SESSION_RULES = "its API has none. Set `permission` in the server's opencode.json, or leave `permissions` unset";

/**
 * One request makes the session with everything its task needs that the server's create takes
 * (both the pre-release and 2.0.26 take the model and the agent; 2.0.26 also the rules), so the
 * prompt after it switches nothing (v2-prompts.ts).
 */
export async function createSessionV2(client: OpencodeV2Client, directory: string | undefined, o: NewSession): Promise<Session> {
  const accepts = client.routes.get("session.create").bodyProperties;
  if (o.rules && !accepts.includes("permissions")) {
    throw new UnsupportedOnEngineError("set permission rules per session", client.identity.version, NO_SESSION_RULES);
  }
  const body = {
    title: o.title,
    ...(directory && accepts.includes("location") ? { location: { directory } } : {}),
    ...(o.rules ? { permissions: rulesV2(o.rules) } : {}),
    ...(o.model && accepts.includes("model") ? { model: modelRefV2(o.model) } : {}),
    ...(o.agent && accepts.includes("agent") ? { agent: o.agent } : {}),
  };
  return sessionOfV2(dataOf<V2Session>(await client.request("session.create", { body })));
}

export async function getSessionV2(client: OpencodeV2Client, id: string): Promise<Session> {
  return sessionOfV2(dataOf<V2Session>(await client.request("session.get", { path: { sessionID: id } })));
}

export async function listSessionsV2(client: OpencodeV2Client, o: { limit: number; search?: string }): Promise<Session[]> {
  const page = (await client.request("session.list", {
    query: { limit: String(o.limit), ...(o.search ? { search: o.search } : {}) },
  })) as V2Page<V2Session>;
  return (page.data ?? []).map(sessionOfV2);
}

export async function childSessionsV2(client: OpencodeV2Client, id: string): Promise<Session[]> {
  const page = (await client.request("session.list", { query: { parentID: id } })) as V2Page<V2Session>;
  return (page.data ?? []).map(sessionOfV2);
}

export async function setRulesV2(client: OpencodeV2Client, id: string, rules: PermissionRule[]): Promise<void> {
  const route = client.routes.get("session.rename");
  if (!route.bodyProperties.includes("permissions")) {
    throw new UnsupportedOnEngineError("change a session's permission rules", client.identity.version, NO_SESSION_RULES);
  }
  await client.request("session.rename", { path: { sessionID: id }, body: { permissions: rulesV2(rules) } });
}

export async function renameV2(client: OpencodeV2Client, id: string, title: string): Promise<Session> {
  await client.request("session.rename", { path: { sessionID: id }, body: { title } });
  return getSessionV2(client, id);
}

export async function removeV2(client: OpencodeV2Client, id: string): Promise<boolean> {
  await client.request("session.remove", { path: { sessionID: id } });
  return true;
}

export async function forkV2(client: OpencodeV2Client, id: string, o: { messageId?: string }): Promise<Session> {
  const takesBoundary = client.routes.get("session.fork").bodyProperties.includes("boundary");
  const body = takesBoundary
    ? { boundary: o.messageId ? { type: "before", messageID: o.messageId } : { type: "through" } }
    : o.messageId
      ? { before: o.messageId }
      : {};
  return sessionOfV2(dataOf<V2Session>(await client.request("session.fork", { path: { sessionID: id }, body })));
}

export async function revertV2(client: OpencodeV2Client, id: string, o: { messageId: string; partId?: string }): Promise<Session> {
  if (o.partId) throw new UnsupportedOnEngineError("revert to a part of a message", client.identity.version, "revert to the whole message (leave partId out)");
  await client.request("session.revert.stage", { path: { sessionID: id }, body: { messageID: o.messageId } });
  return getSessionV2(client, id);
}

export async function unrevertV2(client: OpencodeV2Client, id: string): Promise<Session> {
  await client.request("session.revert.clear", { path: { sessionID: id } });
  return getSessionV2(client, id);
}

/** 2.x compacts as an execution of its own (with the session's model); wait for it to end. */
export async function compactV2(client: OpencodeV2Client, id: string, o: { timeoutMs: number }): Promise<boolean> {
  await client.request("session.compact", { path: { sessionID: id }, body: {} });
  await client.request("session.wait", { path: { sessionID: id } }, { timeoutMs: o.timeoutMs });
  return true;
}
