// Types of `client.call(operationId, args)`, derived from the generated `operations` interface so a
// wrong operation id, a missing path parameter or a misspelt body field is a compile error.
import type { components, operations as OperationTypes } from "../../generated/openapi.js";
import type { OperationId } from "../../generated/operations.js";

export type { OperationId };
export type Schemas = components["schemas"];

type Op<Id extends OperationId> = OperationTypes[Id];
type Params<Id extends OperationId> = Op<Id> extends { parameters: infer P } ? P : never;
type ParamsOf<O> = O extends { parameters: infer P } ? P : never;

type PathArgs<P> = P extends { path: infer V } ? { path: V } : { path?: undefined };
type QueryArgs<P> = P extends { query: infer V }
  ? { query: V }
  : P extends { query?: infer V }
    ? [NonNullable<V>] extends [never]
      ? { query?: undefined }
      : { query?: NonNullable<V> }
    : { query?: undefined };
type JsonOf<C> = C extends { content: { "application/json": infer B } } ? B : never;
type BodyArgs<O> = O extends { requestBody: infer R }
  ? { body: JsonOf<R> }
  : O extends { requestBody?: infer R }
    ? [NonNullable<R>] extends [never]
      ? { body?: undefined }
      : { body?: JsonOf<NonNullable<R>> }
    : { body?: undefined };

/** `{ path, query, body }` of an operation type from openapi-typescript's `operations` (either API). */
export type ArgsOfOperation<O> = PathArgs<ParamsOf<O>> & QueryArgs<ParamsOf<O>> & BodyArgs<O>;

/** `{ path, query, body }` of one operation; keys are required exactly when the spec requires them. */
export type CallArgs<Id extends OperationId> = PathArgs<Params<Id>> & QueryArgs<Params<Id>> & BodyArgs<Op<Id>>;

// `{}` on purpose: a key is optional exactly when an object without it still fits.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
type RequiredKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? never : K }[keyof T];

export interface CallOptions {
  /** Per-request timeout (ms) for the response headers; default: the client's `timeoutMs`. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Overrides the client's `directory` for this call. */
  directory?: string;
}

/** An argument list whose args may be omitted when nothing in them is required. */
export type ParamsFor<A> = RequiredKeys<A> extends never ? [args?: A, options?: CallOptions] : [args: A, options?: CallOptions];

/** The argument list of `call`: args may be omitted when nothing is required. */
export type CallParams<Id extends OperationId> = ParamsFor<CallArgs<Id>>;

type SuccessStatus = 200 | 201 | 202 | 204;
type BodyOfResponse<R> = R extends { content: { "application/json": infer D } }
  ? D
  : R extends { content: { "text/event-stream": unknown } }
    ? ReadableStream<Uint8Array>
    : R extends { content: { [type: string]: infer D } }
      ? D
      : undefined;
type ResponsesOf<O> = O extends { responses: infer R } ? R : never;
type Responses<Id extends OperationId> = Op<Id> extends { responses: infer R } ? R : never;

/** The parsed success body of an operation type (`undefined` for 204). */
export type ResultOfOperation<O> = {
  [S in keyof ResponsesOf<O> & SuccessStatus]: BodyOfResponse<ResponsesOf<O>[S]>;
}[keyof ResponsesOf<O> & SuccessStatus];

/** The parsed body of the operation's success response (`undefined` for 204). */
export type CallResult<Id extends OperationId> = {
  [S in keyof Responses<Id> & SuccessStatus]: BodyOfResponse<Responses<Id>[S]>;
}[keyof Responses<Id> & SuccessStatus];

/** One event of `GET /global/event`: opencode's event union plus where it came from. */
export type OpencodeEvent = Schemas["GlobalEvent"]["payload"] & { directory?: string; project?: string };
export type OpencodeEventType = OpencodeEvent["type"];
export type EventOf<T extends OpencodeEventType> = Extract<OpencodeEvent, { type: T }>;

/** Emitted by `events()` after the stream dropped and came back: events in between were lost, re-read state. */
export interface ReconnectedEvent {
  type: "conductor.reconnected";
  properties: { attempt: number; downtimeMs: number };
}

/** Emitted by `events()` each time the stream drops (before it tries again): the server may be gone. */
export interface DisconnectedEvent {
  type: "conductor.disconnected";
  properties: { message: string };
}
