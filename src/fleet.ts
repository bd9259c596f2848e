// opencode-conductor/fleet: the queue and its workers (docs/scaling.md), for programs that enqueue
// or run fleet work themselves. Its own entry because it loads BullMQ and ioredis, which a program
// that only uses `Conductor` must not pay for (a Conductor with `queue` settings loads them itself,
// when the first task is queued).
export { TaskQueue } from "./core/queue/client.js";
export { FleetWorker, type FleetWorkerOptions } from "./core/queue/worker.js";
export type { QueueStatus } from "./core/queue/status.js";
export type { QueueSettings } from "./core/queue/settings.js";
export type { QueuedSummary, TaskView, TaskState, RepoOutcome } from "./core/queue/outcome.js";
export type { Attempt, AttemptOutcome } from "./core/queue/attempts.js";
export type { RepoSource, QueuedDelegateOptions } from "./core/queue/spec.js";
