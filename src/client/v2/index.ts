export { connectV2, type ConnectV2Options, type OpencodeV2Client, type V2CallArgs, type V2CallResult, type V2LooseArgs } from "./client.js";
export { parseV2Event, sessionOf, type V2Event } from "./event-framing.js";
export { resolveV2Routes, RouteMissingError, V2_ROUTE_NAMES, V2_ROUTES, type ResolvedRoute, type V2RouteName, type V2Routes } from "./routes.js";
