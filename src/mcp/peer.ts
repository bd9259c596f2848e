// Who is calling, on which protocol era. A 2025-11-25 client said it once at `initialize`; a
// 2026-07-28 client says it on every request (the `_meta` envelope), and the SDK hands both to the
// server instance serving the request, so one read works on both eras.
import type { ClientCapabilities, Implementation, McpServer, ServerContext } from "@modelcontextprotocol/server";

export type Era = "legacy" | "modern";

export interface Peer {
  era: Era;
  /** The protocol revision the request speaks (`2025-11-25`, `2026-07-28`, …) when the SDK knows it. */
  protocolVersion?: string;
  client?: { name: string; version: string };
  capabilities?: ClientCapabilities;
}

/** 2026-07-28 and later are the modern era: no `initialize`, no server-to-client requests. */
export function isModern(protocolVersion: string | undefined): boolean {
  return protocolVersion !== undefined && protocolVersion >= "2026-07-28";
}

/** The reserved `_meta` keys of a 2026-07-28 request, as the SDK lifts them out (`ctx.mcpReq.envelope`). */
interface Envelope {
  "io.modelcontextprotocol/protocolVersion"?: string;
  "io.modelcontextprotocol/clientInfo"?: Implementation;
  "io.modelcontextprotocol/clientCapabilities"?: ClientCapabilities;
}

/** The request's own envelope first (2026-07-28); else what the client said at initialize. */
export function peerOf(server: McpServer, request?: ServerContext): Peer {
  const envelope = (request?.mcpReq.envelope ?? {}) as Envelope;
  const protocolVersion = envelope["io.modelcontextprotocol/protocolVersion"] ?? server.server.getNegotiatedProtocolVersion();
  const v = envelope["io.modelcontextprotocol/clientInfo"] ?? server.server.getClientVersion();
  return {
    era: isModern(protocolVersion) ? "modern" : "legacy",
    ...(protocolVersion ? { protocolVersion } : {}),
    ...(v ? { client: { name: v.name, version: v.version } } : {}),
    capabilities: envelope["io.modelcontextprotocol/clientCapabilities"] ?? server.server.getClientCapabilities(),
  };
}

/** Form elicitation declared (a bare `elicitation: {}` is the form mode of the revisions before modes). */
export function declaresFormElicitation(capabilities: ClientCapabilities | undefined): boolean {
  const e = capabilities?.elicitation as { form?: unknown; url?: unknown } | undefined;
  return e !== undefined && (e.form !== undefined || e.url === undefined);
}
