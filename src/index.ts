// opencode-conductor as a library: the typed opencode client, and the core operations on top of it.
export * from "./client/index.js";
export { operations, type OperationSpec } from "../generated/operations.js";

export { Conductor, type ConductorDelegateOptions, type ConductorDelegateResult, type ConductorExtras, type ConductorOptions } from "./core/conductor.js";
// Where work runs (here, a private instance, the queue), its one result type, and the delegation ledger (conductor.delegations).
export type { Placement } from "./core/placement/decide.js";
export type { BatchTurn, PlacedBatch, PlacedFacts, PlacedResult } from "./core/placement/result.js";
export type { FollowedResult, FollowUpOptions } from "./core/placement/follow-ups.js";
export type { BatchOptions, BatchTask, TaskOptions } from "./core/placement/run.js";
export type { Delegation, DelegationsApi } from "./core/ledger/delegations.js";
export type { DelegationKind } from "./core/ledger/record.js";
export type { DelegationStatus } from "./core/ledger/status.js";
export type { CoreContext, CoreSettings } from "./core/context.js";
export { UsageError, type NextStep } from "./core/errors.js";
export { ModelResolutionError, resolveModel, formatModel, type ModelRef } from "./core/catalog/model-resolve.js";
export type { DelegateOptions, DelegateResult } from "./core/delegate.js";
export type { ParallelOptions, ParallelResult, ParallelSummary, ParallelTask, WaitAllOptions } from "./core/parallel.js";
export type { Delivery, SendOptions, SessionState } from "./core/control.js";
export type { PendingRequest, PendingPermission, PendingQuestion, AnswerPermission, AnswerQuestion } from "./core/model/pending-request.js";
export type { PermissionConfig, Permissions, PermissionPreset, PermissionRule } from "./core/policy/permissions.js";
export { rulesFromConfig } from "./core/policy/permissions.js";
export type { TurnSummary, Detail, ToolUse } from "./core/turns/summary.js";
// The core's own nouns (src/core/model/).
export type { TurnStatus } from "./core/model/turn-outcome.js";
export type { FileChange } from "./core/model/file-change.js";
export type { TurnTokens } from "./core/model/cost.js";
export type { TurnProgress } from "./core/turns/turn-progress.js";
export type { WaitOptions } from "./core/turns/turn.js";
// Sessions, models, status and catalogs are methods of Conductor (conductor.sessions.info(id),
// conductor.models(), conductor.status(), conductor.catalog(kind)); their types:
export type { SessionsApi } from "./core/sessions/api.js";
export type { SessionRow, ListSessionsOptions } from "./core/sessions/rows.js";
export type { SessionDetails, RunState } from "./core/sessions/info.js";
export type { CompactMessage, MessagesPage } from "./core/sessions/messages.js";
export type { SessionDiff } from "./core/sessions/diff.js";
export type { RevertState, CompactOptions, ShellOptions } from "./core/sessions/actions.js";
export type { ServerStatus } from "./core/catalog/status.js";
export type { ModelRow, ListModelsOptions } from "./core/catalog/models.js";
export { CATALOG_KINDS, type CatalogKind, type CatalogRows } from "./core/catalog/catalogs.js";
export { InstanceManager } from "./core/instances/manager.js";
export { type InstanceManagerOptions } from "./core/instances/types.js";
export { InstanceLeases, type InstanceLease } from "./core/instances/leases.js";
// The types of queued work (Conductor's `queue` option, `repo` tasks, `taskQueue()`); TaskQueue and
// FleetWorker themselves are in "opencode-conductor/fleet", so that this entry does not load BullMQ.
export type { QueueSettings } from "./core/queue/settings.js";
export type { QueuedSummary, TaskView, TaskState, RepoOutcome } from "./core/queue/outcome.js";
export type { Attempt, AttemptOutcome } from "./core/queue/attempts.js";
export type { RepoSource, QueuedDelegateOptions } from "./core/queue/spec.js";
export type { QueueStatus } from "./core/queue/status.js";

export { createServer, INSTRUCTIONS } from "./mcp/server.js";
export { loadConfig, type Config } from "./config.js";
