// Approvals for worker sessions: a permission request or question in a session a worker runs is
// published in Redis (a hash by request id, and an `asked` event on the fleet's channel), so the
// caller that started the task (MCP elicitation, or BLOCKED with the oc_answer call), oc_pending on
// any MCP server and the console all see it. Whoever answers does so on the worker's opencode
// itself (servers.ts says how to reach it), so the worker's turn watch sees the answer as it sees
// any: it then clears the request and says `answered` on the channel.
import type { PendingRequest } from "../model/pending-request.js";
import type { Redis } from "ioredis";
import { publish } from "./fleet-events.js";
import type { FleetKeys } from "./names.js";

export interface FleetRequest {
  taskId: string;
  /** The opencode server of the session that asks (URL only). */
  server: string;
  worker: string;
  askedAt: number;
  request: PendingRequest;
}

export async function publishAsked(redis: Redis, keys: FleetKeys, r: FleetRequest, retentionS: number): Promise<void> {
  await redis.multi().hset(keys.pending, r.request.id, JSON.stringify(r)).expire(keys.pending, retentionS).exec();
  await publish(redis, keys.events, { type: "asked", taskId: r.taskId, request: r.request, server: r.server });
}

export async function publishAnswered(redis: Redis, keys: FleetKeys, taskId: string, requestId: string): Promise<void> {
  await redis.hdel(keys.pending, requestId);
  await publish(redis, keys.events, { type: "answered", taskId, requestId });
}

/** Requests waiting in worker sessions (of one task, when given). */
export async function fleetPending(redis: Redis, keys: FleetKeys, taskId?: string): Promise<FleetRequest[]> {
  const all = Object.values(await redis.hgetall(keys.pending)).map((raw) => JSON.parse(raw) as FleetRequest);
  return (taskId === undefined ? all : all.filter((r) => r.taskId === taskId)).sort((a, b) => a.askedAt - b.askedAt);
}

export async function fleetRequest(redis: Redis, keys: FleetKeys, id: string): Promise<FleetRequest | undefined> {
  const raw = await redis.hget(keys.pending, id);
  return raw ? (JSON.parse(raw) as FleetRequest) : undefined;
}

/** Drops whatever a task left waiting (its attempt ended: nothing of it is waiting any more). */
export async function clearTask(redis: Redis, keys: FleetKeys, taskId: string): Promise<void> {
  const ids = (await fleetPending(redis, keys, taskId)).map((r) => r.request.id);
  if (ids.length) await redis.hdel(keys.pending, ...ids);
}
