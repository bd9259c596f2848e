// What using the connected server's own spec costs (oc_api / oc_api_ops on a release whose spec
// differs from the pin): reading the ~480 KB document, the operation catalog, bundling one
// operation's schemas, compiling its Ajv validators, and the first tool calls end to end. tools/list
// never reads the spec. Run: npm run bench:spec
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Ajv2020 } from "ajv/dist/2020.js";
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { operationRow } from "../src/openapi/operation-row.js";
import { listOperations, type OpenApiDocument } from "../src/openapi/spec.js";
import { connect } from "../src/client/connect.js";
import { loadConfig } from "../src/config.js";
import { Conductor } from "../src/core/conductor.js";
import { guardFeatures } from "../src/core/engine/server/feature-guard.js";
import { createServer } from "../src/mcp/server.js";

const bytes = readFileSync(join(import.meta.dirname, "..", "spec", "openapi.json"));
const spec = JSON.parse(bytes.toString("utf8")) as OpenApiDocument;
spec.paths["/x/ping"] = { get: { operationId: "x.ping", summary: "Ping", responses: { "200": { description: "ok" } } } };
const doc = JSON.stringify(spec); // differs from the pin, so the live catalog is used

const ms = (t0: number) => `${(performance.now() - t0).toFixed(1)} ms`;
function time<T>(label: string, fn: () => T): T {
  const t0 = performance.now();
  const out = fn();
  console.log(`${label.padEnd(52)} ${ms(t0)}`);
  return out;
}

console.log(`spec: ${(doc.length / 1024).toFixed(0)} KB`);
const parsed = time("JSON.parse of GET /doc", () => JSON.parse(doc) as OpenApiDocument);
const ops = time("listOperations (the catalog: ids, paths, texts)", () => listOperations(parsed));
let slowest = ["", 0] as [string, number];
const rows = time(`operationRow for all ${ops.length} operations (bundling)`, () =>
  ops
    .filter((op) => op.method !== "head")
    .map((op) => {
      const t0 = performance.now();
      const row = operationRow(parsed, op);
      const took = performance.now() - t0;
      if (took > slowest[1]) slowest = [op.id, took];
      return row;
    }),
);
console.log(`${"  slowest single operation".padEnd(52)} ${slowest[1].toFixed(1)} ms (${slowest[0]})`);
const ajv = new Ajv2020({ strict: false, allErrors: true, verbose: true });
let slowestCompile = ["", 0] as [string, number];
time("Ajv compile of every body schema", () => {
  for (const row of rows) {
    if (!row.body) continue;
    const t0 = performance.now();
    ajv.compile(row.body);
    const took = performance.now() - t0;
    if (took > slowestCompile[1]) slowestCompile = [row.id, took];
  }
});
console.log(`${"  slowest single compile".padEnd(52)} ${slowestCompile[1].toFixed(1)} ms (${slowestCompile[0]})`);

// End to end through the MCP server, as a client sees it.
const fetch = async (request: Request) => {
  const path = new URL(request.url).pathname;
  if (path === "/global/health") return Response.json({ healthy: true, version: "9.9.9" });
  if (path === "/doc") return new Response(doc, { headers: { "content-type": "application/json" } });
  return Response.json([]);
};
const conductor = new Conductor({ client: connect({ url: "http://127.0.0.1:1", fetch }) });
guardFeatures(conductor.client);
const server = createServer({ config: loadConfig({}), conductor: async () => conductor });
const client = new Client({ name: "bench", version: "0" });
const [a, b] = InMemoryTransport.createLinkedPair();
await Promise.all([server.connect(a), client.connect(b)]);
async function call(label: string, fn: () => Promise<unknown>) {
  const t0 = performance.now();
  await fn();
  console.log(`${label.padEnd(52)} ${ms(t0)}`);
}
await call("tools/list (never reads the spec)", () => client.listTools());
await call("first oc_api_ops (health + /doc + catalog)", () => client.callTool({ name: "oc_api_ops", arguments: { limit: 5 } }));
await call("oc_api_ops session.prompt (bundle one operation)", () => client.callTool({ name: "oc_api_ops", arguments: { operation: "session.prompt" } }));
await call("first oc_api session.prompt_async (Ajv compile)", () =>
  client.callTool({
    name: "oc_api",
    arguments: { operation: "session.prompt_async", params: { sessionID: "ses_1" }, body: { parts: [{ type: "text", text: "hi" }] } },
  }),
);
await call("second oc_api session.prompt_async (compiled)", () =>
  client.callTool({
    name: "oc_api",
    arguments: { operation: "session.prompt_async", params: { sessionID: "ses_1" }, body: { parts: [{ type: "text", text: "hi" }] } },
  }),
);
await client.close();
