// Sends an operation that only the connected server's spec has (the typed client knows the pinned
// operations only), through the same openapi-fetch client, auth and error types as client.call.
import type { OpencodeClient } from "../../client/connect.js";
import { ConnectionError, errorForResponse, OpencodeError, safeUrl } from "../../client/errors.js";
import type { ApiOperation } from "./catalog.js";

type LooseRequest = (method: string, path: string, init: Record<string, unknown>) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

export async function callServerOperation(
  client: OpencodeClient,
  op: ApiOperation,
  args: { path: Record<string, unknown>; query: Record<string, unknown>; body: unknown },
  options: { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<unknown> {
  const method = op.method.toUpperCase();
  const context = { operationId: op.id, method, url: safeUrl(client.url + op.path) };
  const query = { ...args.query };
  const takesDirectory = Boolean((op.query?.properties as Record<string, unknown> | undefined)?.directory);
  if (client.directory !== undefined && takesDirectory && query.directory === undefined) query.directory = client.directory;
  const type = op.responses.find((r) => r.status.startsWith("2") && r.contentType)?.contentType ?? "application/json";
  const timeout = AbortSignal.timeout(options.timeoutMs ?? 30_000);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  try {
    const { data, error, response } = await (client.raw.request as unknown as LooseRequest)(method, op.path, {
      params: { path: args.path, query },
      body: args.body,
      signal,
      parseAs: type.includes("json") ? "json" : "text",
    });
    if (!response.ok) throw errorForResponse(response.status, error, context);
    return data;
  } catch (error) {
    if (error instanceof OpencodeError || options.signal?.aborted) throw error;
    const reason = timeout.aborted ? "timeout" : "unreachable";
    throw new ConnectionError(`opencode at ${safeUrl(client.url)} did not answer ${op.id} (${reason}).`, reason, context, error);
  }
}
