// A reverse proxy in front of an opencode server that records every request it forwards (method,
// path, start and end time, the session it concerns), so a benchmark can count the requests a task
// costs and see which of its time opencode spent answering. Event streams pass through as they come.
import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface ProxiedRequest {
  method: string;
  /** The path without the query. */
  path: string;
  /** Epoch ms, with sub-millisecond precision (performance.timeOrigin + now). */
  start: number;
  end?: number;
  status?: number;
  /** `ses_…` from the path, or from the answer of a create. */
  sessionId?: string;
  /** An event stream (never ends while the client follows it). */
  stream: boolean;
}

export interface CountingProxy {
  /** `http://127.0.0.1:PORT` */
  url: string;
  readonly requests: ProxiedRequest[];
  /** Requests that are not event streams, since `from` (an index into `requests`). */
  calls(from?: number): ProxiedRequest[];
  close(): Promise<void>;
}

const SESSION_IN_PATH = /\/(ses_[A-Za-z0-9]+)/;
const STREAM_PATHS = new Set(["/global/event", "/event", "/api/event"]);

const now = () => performance.timeOrigin + performance.now();

export async function startCountingProxy(target: string): Promise<CountingProxy> {
  const upstream = new URL(target);
  const requests: ProxiedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    const record: ProxiedRequest = { method: req.method ?? "GET", path, start: now(), stream: STREAM_PATHS.has(path) };
    const inPath = SESSION_IN_PATH.exec(path)?.[1];
    if (inPath) record.sessionId = inPath;
    requests.push(record);
    const forward = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } },
      (answer: IncomingMessage) => {
        record.status = answer.statusCode;
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        const created = !record.sessionId && record.method === "POST" && /\/session$/.test(path);
        const chunks: Buffer[] = [];
        answer.on("data", (chunk: Buffer) => {
          if (created) chunks.push(chunk);
          res.write(chunk);
        });
        answer.on("end", () => {
          record.end = now();
          if (created) record.sessionId = createdId(Buffer.concat(chunks).toString());
          res.end();
        });
        answer.on("error", () => res.destroy());
      },
    );
    forward.on("error", () => {
      record.end = now();
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    res.on("close", () => forward.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    calls: (from = 0) => requests.slice(from).filter((r) => !r.stream),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The id in a create answer: 1.x answers the session, 2.x `{data: session}`. */
function createdId(body: string): string | undefined {
  try {
    const value = JSON.parse(body) as { id?: unknown; data?: { id?: unknown } };
    const id = value.data?.id ?? value.id;
    return typeof id === "string" ? id : undefined;
  } catch {
    return undefined;
  }
}
