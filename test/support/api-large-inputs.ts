// Oversized and pathological inputs for oc_api / oc_api_ops, and an in-memory MCP server whose
// opencode serves a spec other than the pin (so the live catalog, bundling and Ajv paths run).
// Shared by the unit test (every input gets the right answer, errors bounded) and
// `npm run bench:stall` (how long each call keeps the event loop busy).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { connect } from "../../src/client/connect.js";
import { Conductor } from "../../src/core/conductor.js";
import { guardFeatures } from "../../src/core/engine/server/feature-guard.js";
import { memoryMcp, type MemoryMcp } from "./mcp-memory.js";

const BIG = "session ".repeat(220_000); // 1.76 MB, the size that used to block for 20 s

const parts = (n: number, part: unknown) => Array.from({ length: n }, () => part);

/** A label, the tool, its arguments, whether it must fail, and what its answer must say. */
export type LargeInput = [label: string, tool: string, args: Record<string, unknown>, outcome: "error" | "ok", says: RegExp];

/** In order: the first three are the first calls on the server's spec (cold parse, bundling, compile). */
export const LARGE_INPUTS: LargeInput[] = [
  ["first call on the server's spec (parse, catalog)", "oc_api_ops", { limit: 5 }, "ok", /^189 operations of the connected opencode 9\.9\.9's own spec/],
  ["one operation's schemas (bundling)", "oc_api_ops", { operation: "session.prompt" }, "ok", /^session\.prompt {2}POST \/session\/\{sessionID\}\/message/],
  [
    "first validation of a big body schema (Ajv compile)",
    "oc_api",
    { operation: "session.prompt_async", params: { sessionID: "ses_1" }, body: { parts: [{ type: "text", text: "hi" }] } },
    "ok",
    /^session\.prompt_async \(POST \/session\/ses_1\/prompt_async\): ok/,
  ],
  ["a 1.76 MB search", "oc_api_ops", { search: BIG }, "error", /`search` is 1760000 characters; at most 200 are accepted/],
  ["a 1.76 MB operation reference", "oc_api_ops", { operation: BIG }, "error", /`operation` is 1760000 characters; at most 300 are accepted/],
  ["a 1.76 MB operation for oc_api", "oc_api", { operation: BIG }, "error", /`operation` is 1760000 characters; at most 300 are accepted/],
  ["a 1.76 MB path", "oc_api", { method: "GET", path: `/session/${BIG}` }, "error", /`path` is 1760009 characters; at most 3000 are accepted/],
  ["a 1.76 MB method", "oc_api", { method: BIG, path: "/session" }, "error", /method must be GET, POST, PUT, PATCH or DELETE \(got "session session sess"\)/],
  [
    "a 1.76 MB path parameter",
    "oc_api",
    { operation: "session.get", params: { sessionID: `ses_${BIG}` } },
    "error",
    /params\.sessionID is 1760004 characters; a path parameter \(an id\) has at most 1000/,
  ],
  // More keys than this cost the MCP SDK's own argument parsing ~1 ms per 1,000 before any tool runs.
  [
    "10,001 unknown query keys (one past the cap)",
    "oc_api",
    { operation: "session.list", query: Object.fromEntries(parts(10_001, 0).map((_, i) => [`k${i}`, "v"])) },
    "error",
    /hold more than 10000 values together, so nothing was checked or sent/,
  ],
  [
    "100,000 wrong body parts",
    "oc_api",
    { operation: "session.prompt_async", params: { sessionID: "ses_1" }, body: { parts: parts(100_000, { type: "txt" }) } },
    "error",
    /hold more than 10000 values together, so nothing was checked or sent/,
  ],
  [
    "3,000 wrong body parts (under the size cap: every part fails validation)",
    "oc_api",
    { operation: "session.prompt_async", params: { sessionID: "ses_1" }, body: { parts: parts(3_000, { type: "txt" }) } },
    "error",
    /the arguments do not match opencode's schema, so nothing was sent\.\n- body\.parts\[0\]\.type: must be one of/,
  ],
  [
    "a 1.76 MB text part",
    "oc_api",
    { operation: "session.prompt_async", params: { sessionID: "ses_1" }, body: { parts: [{ type: "text", text: BIG }] } },
    "ok",
    /^session\.prompt_async \(POST \/session\/ses_1\/prompt_async\): ok/,
  ],
  [
    "a body nested 5,000 levels deep",
    "oc_api",
    { operation: "session.prompt_async", params: { sessionID: "ses_1" }, body: JSON.parse(`${'{"a":'.repeat(5_000)}1${"}".repeat(5_000)}`) },
    "error",
    /nest more than 100 levels deep, so nothing was checked or sent/,
  ],
];

/** The api toolset in memory, on an opencode whose spec has one operation more than the pin. */
export async function liveSpecApiMcp(): Promise<MemoryMcp> {
  const spec = JSON.parse(readFileSync(join(import.meta.dirname, "../../spec/openapi.json"), "utf8"));
  spec.paths["/x/ping"] = { get: { operationId: "x.ping", summary: "Ping", responses: { "200": { description: "ok" } } } };
  const doc = JSON.stringify(spec);
  const fetch = async (request: Request) => {
    const url = new URL(request.url);
    if (url.pathname === "/global/health") return Response.json({ healthy: true, version: "9.9.9" });
    if (url.pathname === "/doc") return new Response(doc, { headers: { "content-type": "application/json" } });
    return Response.json({});
  };
  const conductor = new Conductor({ client: connect({ url: "http://127.0.0.1:1", fetch }) });
  guardFeatures(conductor.client);
  return memoryMcp({ conductor, env: { OPENCODE_CONDUCTOR_TOOLSETS: "api" } });
}
