// A fetch wrapper that records every request and response it passes on: method, path, query,
// request body, status, content type, the response headers clients read (RECORDED_HEADERS) and
// body. Event streams are passed through while being
// recorded one SSE event at a time, with the time each arrived. Request headers are never
// stored (they carry the Basic auth password).
import { isEventStream, type Interaction, type RecordedEvent } from "../fixture.js";
import { operationFor } from "../operation-match.js";

/** Response headers the client reads: opencode pages messages with the cursor in `x-next-cursor`. */
const RECORDED_HEADERS = ["x-next-cursor"];

type Fetch = (request: Request) => Promise<Response>;

export interface Recorder {
  fetch: Fetch;
  /** In request order; entries of open event streams keep growing until the stream ends. */
  readonly interactions: Interaction[];
}

/**
 * `match` names the operation of a request (default: the 1.x table); a 2.x recording passes one
 * built from the server's own document.
 */
export function createRecorder(
  base: Fetch = (request) => globalThis.fetch(request),
  match: (method: string, path: string) => string | undefined = operationFor,
): Recorder {
  const started = performance.now();
  const interactions: Interaction[] = [];
  const elapsed = (since = started) => Math.round(performance.now() - since);

  const fetch: Fetch = async (request) => {
    const url = new URL(request.url);
    const requestText = request.body ? await request.clone().text() : "";
    const entry: Interaction = {
      operationId: match(request.method, url.pathname),
      atMs: elapsed(),
      method: request.method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      ...(requestText ? { requestBody: parse(requestText) } : {}),
      status: 0,
      contentType: null,
    };
    if (!entry.operationId) delete entry.operationId;
    interactions.push(entry); // at send time, so the order is the order of requests
    const sentAt = performance.now();
    let response: Response;
    try {
      response = await base(request);
    } catch (error) {
      interactions.splice(interactions.indexOf(entry), 1); // no response: nothing to replay
      throw error;
    }
    entry.status = response.status;
    entry.contentType = response.headers.get("content-type");
    for (const name of RECORDED_HEADERS) {
      const value = response.headers.get(name);
      if (value !== null) entry.headers = { ...entry.headers, [name]: value };
    }
    if (isEventStream(entry.contentType) && response.body) {
      entry.events = [];
      const body = recordStream(response.body, entry.events, () => elapsed(sentAt));
      return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
    }
    const text = await response.clone().text();
    if (text) entry.body = parse(text);
    return response;
  };
  return { fetch, interactions };
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Passes `source` through unchanged, appending each complete SSE event to `events`. */
function recordStream(source: ReadableStream<Uint8Array>, events: RecordedEvent[], now: () => number): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const take = () => {
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).replace(/^ /, ""))
        .join("\n");
      if (data) events.push({ atMs: now(), data: parse(data) });
    }
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await reader.read();
      if (done) {
        controller.close();
        return;
      }
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
      take();
      controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}
