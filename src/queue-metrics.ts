// `opencode-conductor queue metrics --listen HOST:PORT`: the fleet's backlog over HTTP for KEDA's
// metrics-api trigger (deploy/k8s/scaledobject.yaml). KEDA's Redis trigger reads one list's length,
// but a job waiting for a worker may be in BullMQ's `wait` list or in its `prioritized` or
// `delayed` sorted sets (a task back from its provider's limit waits in `delayed`), on the shared
// queue or a root's: GET /backlog answers their sum over every queue of the fleet. Nothing secret
// is in it (counts only).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { TaskQueue } from "./core/queue/client.js";
import { backlog } from "./core/queue/status.js";

export function parseListen(value: string): { host: string; port: number } {
  const m = /^(?:(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):)?(\d{1,5})$/.exec(value);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port > 65535) throw new Error(`--listen takes [HOST:]PORT, e.g. 0.0.0.0:9464 (got "${value.slice(0, 80)}")`);
  return { host: (m[1] ?? "127.0.0.1").replace(/^\[|\]$/g, ""), port };
}

export async function serveBacklog(q: TaskQueue, host: string, port: number): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://metrics").pathname;
    if (req.method !== "GET" || (path !== "/backlog" && path !== "/healthz")) {
      res.writeHead(404, { "content-type": "application/json" });
      return res.end(JSON.stringify({ error: "GET /backlog or /healthz" }));
    }
    backlog(q).then(
      (b) => {
        res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" });
        res.end(JSON.stringify(path === "/healthz" ? { ok: true } : b));
      },
      (error: Error) => {
        res.writeHead(503, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: `the queue's Redis did not answer: ${error.message.slice(0, 200)}` }));
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return { server, url: `http://${host.includes(":") ? `[${host}]` : host}:${address.port}/backlog` };
}
