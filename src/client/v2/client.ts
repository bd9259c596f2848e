// `connectV2()`: a client for one opencode 2.x server (the v2 API under /api). It identifies the
// server, reads the server's own /openapi.json once, resolves every operation the v2 engine needs
// by name (routes.ts), and calls them through the same openapi-fetch executor and typed errors as
// the 1.x client. Argument and result types come from the released 2.0.26 document
// (generated/v2/); the route itself always comes from the connected server's document.
import createClient, { type Client } from "openapi-fetch";
import type { operations as V2OperationTypes, paths as V2Paths } from "../../../generated/v2/openapi.js";
import { splitCredentials, type ConnectOptions } from "../connect.js";
import { detectServer, fetchServerSpec, authHeader, type ServerIdentity } from "../detect.js";
import { OpencodeError, safeUrl } from "../errors.js";
import { streamEvents, type EventsOptions } from "../event-stream.js";
import { performRequest, type RequestContext } from "../request.js";
import { refuseOversizedRequests } from "../request-size.js";
import type { ArgsOfOperation, CallOptions, DisconnectedEvent, ParamsFor, ReconnectedEvent, ResultOfOperation } from "../types.js";
import { parseV2Event, type V2Event } from "./event-framing.js";
import { resolveV2Routes, type V2_ROUTES, type V2RouteName, type V2Routes } from "./routes.js";

type V2OperationId = keyof V2OperationTypes;
/** The 2.0.26 operationId of a route name, when 2.0.26 has it (questions exist only on the pre-release). */
type TypedId<N extends V2RouteName> = Extract<(typeof V2_ROUTES)[N]["ids"][number], V2OperationId>;

/** Loose arguments: for routes 2.0.26 does not type, and for bodies that differ between 2.x releases. */
export interface V2LooseArgs {
  path?: Record<string, string>;
  query?: Record<string, unknown>;
  body?: unknown;
}
export type V2CallArgs<N extends V2RouteName> = [TypedId<N>] extends [never] ? V2LooseArgs : ArgsOfOperation<V2OperationTypes[TypedId<N>]>;
export type V2CallResult<N extends V2RouteName> = [TypedId<N>] extends [never] ? unknown : ResultOfOperation<V2OperationTypes[TypedId<N>]>;

export interface ConnectV2Options extends Omit<ConnectOptions, "directory"> {
  /** Already known (e.g. from discovery); skips the health/info probes. */
  identity?: ServerIdentity;
  /** The server's parsed /openapi.json, when already read. */
  spec?: unknown;
}

export interface OpencodeV2Client {
  readonly url: string;
  readonly identity: ServerIdentity;
  readonly routes: V2Routes;
  /** Calls a route by its engine-facing name, typed after 2.0.26. */
  call<N extends V2RouteName>(name: N, ...params: ParamsFor<V2CallArgs<N>>): Promise<V2CallResult<N>>;
  /** The same call with untyped arguments, for request shapes that differ between 2.x releases. */
  request(name: V2RouteName, args?: V2LooseArgs, options?: CallOptions): Promise<unknown>;
  /** Every server event of `GET /api/event`, reconnecting when the stream drops. */
  events(options?: EventsOptions): AsyncGenerator<V2Event | ReconnectedEvent | DisconnectedEvent>;
  /** The plain openapi-fetch client over the 2.0.26 paths, auth already set. */
  readonly raw: Client<V2Paths>;
}

const DEFAULT_TIMEOUT_MS = 30_000;

export async function connectV2(options: ConnectV2Options): Promise<OpencodeV2Client> {
  const { baseUrl, username, password } = splitCredentials(options);
  const target = { url: baseUrl, username, password, ...(options.fetch ? { fetch: options.fetch } : {}) };
  const identity = options.identity ?? (await detectServer(target));
  if (identity.major !== 2) {
    throw new OpencodeError(
      `The server at ${safeUrl(baseUrl)} is opencode ${identity.version}, which speaks the v1 API: use connect() for it, not connectV2().`,
      0,
    );
  }
  const spec = options.spec ?? (await fetchServerSpec(target, identity)).doc;
  const routes = resolveV2Routes(spec, identity.version);
  if (routes.missing.length > 0) {
    throw new OpencodeError(
      `opencode ${identity.version} at ${safeUrl(baseUrl)} lacks operations the conductor needs: ${routes.missing.join(", ")}. ` +
        "Upgrade opencode, or report which 2.x release this is.",
      0,
    );
  }
  const fetchImpl = refuseOversizedRequests(options.fetch ?? ((request: Request) => globalThis.fetch(request)));
  const raw = createClient<V2Paths>({ baseUrl, headers: authHeader({ username, password }), fetch: fetchImpl });
  // 2.x routes take no `directory`: a session lives in the location it was created in.
  const ctx: RequestContext = { raw, baseUrl, directory: undefined, defaultTimeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS };

  const request = (name: V2RouteName, args: V2LooseArgs = {}, callOptions: CallOptions = {}) => performRequest(ctx, routes.get(name), args, callOptions);

  const client: OpencodeV2Client = {
    url: baseUrl,
    identity,
    routes,
    call: ((name: V2RouteName, args?: V2LooseArgs, callOptions?: CallOptions) => request(name, args, callOptions)) as OpencodeV2Client["call"],
    request,
    events: (eventOptions) =>
      streamEvents((signal) => request("event.subscribe", {}, { signal }) as Promise<ReadableStream<Uint8Array>>, eventOptions, parseV2Event),
    raw,
  };
  return client;
}
