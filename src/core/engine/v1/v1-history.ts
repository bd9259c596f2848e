// One page of a session's messages on opencode 1.x, older than a cursor. opencode puts the cursor
// for older messages only in the `X-Next-Cursor` response header (`before` takes that opaque
// cursor, not a message id), and the client's `call()` returns bodies only, so this read goes
// through the typed raw client with the same errors `call()` raises.
import type { Message } from "../../model/message.js";
import type { OpencodeClient } from "../../../client/connect.js";
import { ConnectionError, errorForResponse, safeUrl } from "../../../client/errors.js";

const PAGE_TIMEOUT_MS = 30_000;

export async function messagesPageV1(
  client: OpencodeClient,
  sessionID: string,
  o: { limit: number; before?: string },
): Promise<{ messages: Message[]; nextBefore?: string }> {
  const directory = client.directory;
  const query = { limit: o.limit, ...(o.before ? { before: o.before } : {}), ...(directory ? { directory } : {}) };
  const context = { operationId: "session.messages", method: "GET", url: safeUrl(client.url) };
  let result;
  try {
    result = await client.raw.GET("/session/{sessionID}/message", {
      params: { path: { sessionID }, query },
      signal: AbortSignal.timeout(PAGE_TIMEOUT_MS),
    });
  } catch (error) {
    const timeout = (error as Error | undefined)?.name === "TimeoutError";
    throw new ConnectionError(
      timeout
        ? `opencode at ${context.url} did not answer session.messages within ${PAGE_TIMEOUT_MS} ms. Check that the server is healthy.`
        : `Cannot reach opencode at ${context.url} (${(error as Error | undefined)?.message ?? String(error)}). Is it running?`,
      timeout ? "timeout" : "unreachable",
      context,
      error,
    );
  }
  if (!result.response.ok || !result.data) throw errorForResponse(result.response.status, result.error, context);
  const next = result.response.headers.get("x-next-cursor");
  return { messages: result.data, ...(next ? { nextBefore: next } : {}) };
}
