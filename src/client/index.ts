export { connect, type ConnectOptions, type OpencodeClient } from "./connect.js";
export { detectServer, type OpencodeMajor, type ServerIdentity } from "./detect.js";
export type { EventsOptions } from "./event-stream.js";
export { AuthError, BadRequestError, ConflictError, ConnectionError, NotFoundError, OpencodeError, ServerError } from "./errors.js";
export { freePort, randomPassword, resolveOpencodeBinary, spawnOpencode, type SpawnedOpencode, type SpawnOpencodeOptions } from "./spawn.js";
export type {
  CallArgs,
  CallOptions,
  CallResult,
  DisconnectedEvent,
  EventOf,
  OpencodeEvent,
  OpencodeEventType,
  OperationId,
  ReconnectedEvent,
  Schemas,
} from "./types.js";
export * from "./v2/index.js";
