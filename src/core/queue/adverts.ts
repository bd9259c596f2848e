// Workers advertise themselves in Redis (host, roots served, concurrency, running tasks, heartbeat)
// with a short expiry, so oc_status and `queue ls` list the live fleet and a dead worker drops off.
import type { Redis } from "ioredis";
import { execAll } from "./multi.js";
import type { FleetKeys } from "./names.js";

export const HEARTBEAT_MS = 5_000;
/** An advert not renewed for this long is gone (a killed worker). */
export const ADVERT_TTL_S = 20;

export interface WorkerAdvert {
  id: string;
  host: string;
  pid: number;
  roots: string[];
  concurrency: number;
  /** Workflow walks at once (walk jobs). */
  walks?: number;
  running: number;
  /** The worker's opencode (URL only, never its password). */
  opencode: string;
  startedAt: string;
  heartbeat: string;
}

export async function writeAdvert(redis: Redis, keys: FleetKeys, advert: WorkerAdvert): Promise<void> {
  await execAll(redis.multi().set(keys.worker(advert.id), JSON.stringify(advert), "EX", ADVERT_TTL_S).sadd(keys.workers, advert.id), "writing the advert");
}

export async function removeAdvert(redis: Redis, keys: FleetKeys, id: string): Promise<void> {
  await execAll(redis.multi().del(keys.worker(id)).srem(keys.workers, id), "removing the advert");
}

export async function readWorkers(redis: Redis, keys: FleetKeys): Promise<WorkerAdvert[]> {
  const ids = await redis.smembers(keys.workers);
  if (ids.length === 0) return [];
  const rows = await redis.mget(ids.map((id) => keys.worker(id)));
  const gone = ids.filter((_, i) => rows[i] === null);
  if (gone.length) await redis.srem(keys.workers, ...gone);
  return rows.flatMap((r) => (r ? [JSON.parse(r) as WorkerAdvert] : [])).sort((a, b) => a.id.localeCompare(b.id));
}
