// `resources/subscribe` for the session resources: while a client is subscribed to
// opencode://session/{id}/…, opencode's events of that session become `notifications/resources/updated`
// for that URI (at most one per UPDATE_MS, so a streaming turn does not flood the client); the client
// then reads the resource again. Unsubscribing, or the MCP session closing, stops the listening.
import type { McpServer } from "@modelcontextprotocol/server";
import type { Conductor } from "../core/conductor.js";
import type { HubEvent } from "../core/event-hub.js";
import { UsageError } from "../core/errors.js";

const UPDATE_MS = 500;
const SESSION_URI = /^opencode:\/\/session\/(ses_[A-Za-z0-9]+)\/(transcript|diff|todo)$/;

function sessionOf(event: HubEvent): string | undefined {
  const id = (event as { properties?: { sessionID?: unknown } }).properties?.sessionID;
  return typeof id === "string" ? id : undefined;
}

export function registerResourceUpdates(server: McpServer, conductor: (sessionId?: string) => Promise<Conductor>): void {
  const subscriptions = new Map<string, () => void>();
  server.server.registerCapabilities({ resources: { subscribe: true } });

  server.server.setRequestHandler("resources/subscribe", async (request) => {
    const uri = request.params.uri;
    const match = SESSION_URI.exec(uri);
    if (!match) throw new UsageError(`Only session resources can be subscribed to (opencode://session/ses_…/transcript|diff|todo), not ${uri.slice(0, 200)}`);
    if (subscriptions.has(uri)) return {};
    const sessionId = match[1]!;
    let timer: NodeJS.Timeout | undefined;
    const notify = () => {
      timer = undefined;
      void server.server.sendResourceUpdated({ uri }).catch(() => undefined);
    };
    const stop = await (
      await conductor(sessionId)
    ).hub.subscribe(
      (event) => {
        if (sessionOf(event) !== sessionId || timer) return;
        timer = setTimeout(notify, UPDATE_MS);
      },
      undefined,
      (id) => id === sessionId,
    );
    subscriptions.set(uri, () => {
      if (timer) clearTimeout(timer);
      stop();
    });
    return {};
  });

  server.server.setRequestHandler("resources/unsubscribe", async (request) => {
    subscriptions.get(request.params.uri)?.();
    subscriptions.delete(request.params.uri);
    return {};
  });

  const previous = server.server.onclose;
  server.server.onclose = () => {
    for (const stop of subscriptions.values()) stop();
    subscriptions.clear();
    previous?.();
  };
}
