// npm run spec:fetch [-- --opencode PATH | --url URL [--password P]] [--out DIR]
// Saves the server's own OpenAPI document byte-for-byte as DIR/openapi.json, and DIR/meta.json
// (opencode version, sha256, operation count). Either major: 1.x serves GET /doc (version from
// /global/health) and goes to spec/ by default; 2.x serves GET /openapi.json (version from /api/info
// or /api/health) and goes to spec/v2/. By default it starts the pinned 1.x binary (or the one OPENCODE_BIN names) in an isolated
// temp HOME; --opencode starts another (1.x or 2.x); --url reads a server that is already running.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { resolveOpencodeBinary } from "../src/client/spawn.js";
import { run, UsageError } from "./lib/cli.js";
import { startIsolatedServer } from "./lib/isolated-server.js";
import { formatMeta, nextMeta, readMeta, sha256, META_FILE } from "./lib/meta.js";
import { fetchSpecFrom, type FetchedSpec } from "./lib/server-fetch.js";
import { listOperations, type OpenApiDocument } from "../src/openapi/spec.js";

const USAGE =
  "usage: npm run spec:fetch [-- --opencode PATH | --url URL [--password P]] [--out DIR]\n" +
  "  --password defaults to $OPENCODE_PASSWORD; --out defaults to spec (1.x) or spec/v2 (2.x); without --opencode/--url, $OPENCODE_BIN or the pinned binary";

run(async () => {
  const { values } = parseArgs({
    options: {
      opencode: { type: "string" },
      url: { type: "string" },
      password: { type: "string" },
      out: { type: "string" },
    },
  });
  if (values.url && values.opencode) throw new UsageError("give either --url or --opencode, not both");
  if (values.password && !values.url) throw new UsageError("--password only applies with --url");

  let fetched: FetchedSpec;
  let source: "binary" | "url";
  if (values.url) {
    source = "url";
    fetched = await fetchSpecFrom({ url: values.url, password: values.password ?? process.env.OPENCODE_PASSWORD });
  } else {
    source = "binary";
    const binary = values.opencode ?? resolveOpencodeBinary();
    if (values.opencode && !existsSync(binary)) throw new UsageError(`--opencode ${binary}: no such file`);
    fetched = await fromBinary(binary);
  }
  save(values.out ?? (fetched.major === 2 ? "spec/v2" : "spec"), fetched, source);
}, USAGE);

async function fromBinary(binary: string): Promise<FetchedSpec> {
  const isolated = await startIsolatedServer(binary);
  // Ctrl-C must not leave a server or temp dirs behind.
  const onSignal = () => void isolated.dispose().finally(() => process.exit(130));
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    return await fetchSpecFrom(isolated.server);
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await isolated.dispose();
  }
}

function save(outDir: string, fetched: FetchedSpec, source: "binary" | "url"): void {
  let spec: OpenApiDocument;
  try {
    spec = JSON.parse(fetched.doc.toString("utf8")) as OpenApiDocument;
  } catch {
    throw new Error(`GET ${fetched.specPath} did not return JSON`);
  }
  const operations = listOperations(spec).length;
  const hash = sha256(fetched.doc);
  const specFile = join(outDir, "openapi.json");
  mkdirSync(outDir, { recursive: true });
  const previous = existsSync(specFile) ? readFileSync(specFile) : null;
  const unchanged = previous !== null && previous.equals(fetched.doc);
  // Written as served, never re-serialised: the bytes are what the sha256 and drift checks cover.
  if (!unchanged) writeFileSync(specFile, fetched.doc);
  const meta = nextMeta({ opencodeVersion: fetched.version, sha256: hash, operations, source }, unchanged ? readMeta(outDir) : null);
  writeFileSync(join(outDir, META_FILE), formatMeta(meta));
  console.log(
    `${specFile}: ${fetched.doc.length} bytes, ${operations} operations, opencode ${fetched.version}, ` +
      `sha256 ${hash} (${unchanged ? "unchanged" : "updated"})`,
  );
}
