// The opencode servers the workers run tasks on, so that anyone of the fleet can reach a session a
// worker ran: another worker re-attaching to it (reattach.ts), an MCP server or library caller
// continuing, forking or answering it, the console. A worker writes how to reach its server when it
// starts and renews it with its heartbeat; each session it starts is indexed to that server. Redis is
// the fleet's trust boundary already (whoever writes a job can run it unguarded), so the password
// lives there, in a key of its own that no listing, advert or answer shows.
import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import { execAll } from "./multi.js";
import type { FleetKeys } from "./names.js";

export interface ServerAccess {
  url: string;
  username?: string;
  password?: string;
}

/** The key of a server in the fleet's table: a hash of its URL (URLs hold `:` and `/`). */
export function serverId(url: string): string {
  return createHash("sha256").update(url).digest("hex").slice(0, 16);
}

function parse(raw: string | null): ServerAccess | undefined {
  if (!raw) return undefined;
  const value = JSON.parse(raw) as ServerAccess;
  return typeof value?.url === "string" ? value : undefined;
}

/** Puts (or renews) the worker's server in the table for `ttlS` seconds. */
export async function registerServer(redis: Redis, keys: FleetKeys, access: ServerAccess, ttlS: number): Promise<void> {
  const id = serverId(access.url);
  await execAll(redis.multi().set(keys.server(id), JSON.stringify(access), "EX", ttlS).sadd(keys.servers, id), "writing the server entry");
}

export async function serverAccess(redis: Redis, keys: FleetKeys, url: string): Promise<ServerAccess | undefined> {
  return parse(await redis.get(keys.server(serverId(url))));
}

export async function indexSession(redis: Redis, keys: FleetKeys, sessionId: string, url: string, ttlS: number): Promise<void> {
  await redis.set(keys.session(sessionId), serverId(url), "EX", ttlS);
}

/** The server a worker started this session on (or a fork of it: see knownServers). */
export async function serverOfSession(redis: Redis, keys: FleetKeys, sessionId: string): Promise<ServerAccess | undefined> {
  const id = await redis.get(keys.session(sessionId));
  return id ? parse(await redis.get(keys.server(id))) : undefined;
}

/** Every server of the table still on record (a session the index does not name may be on one: a fork). */
export async function knownServers(redis: Redis, keys: FleetKeys): Promise<ServerAccess[]> {
  const ids = await redis.smembers(keys.servers);
  if (ids.length === 0) return [];
  const rows = await redis.mget(ids.map((id) => keys.server(id)));
  const gone = ids.filter((_, i) => rows[i] === null);
  if (gone.length) await redis.srem(keys.servers, ...gone);
  return rows.flatMap((raw) => parse(raw) ?? []);
}
