// npm run spec:diff -- OLD.json NEW.json [--json] [--ignore-prefix v2.]: what an opencode upgrade
// adds, removes and changes in the API, operation by operation. Works across majors (1.x → 2.x) and
// between 2.x documents; --ignore-prefix v2. matches `v2.session.create` (1.x's v2 routes, the 2.x
// pre-release) with `session.create` (2.0.x). Exit 0 whether or not there are differences;
// exit 2 on bad usage or an unreadable spec.
import { parseArgs } from "node:util";
import { run, UsageError } from "./lib/cli.js";
import { diffSpecs } from "./lib/diff.js";
import { formatDiffJson, formatDiffText } from "./lib/diff-format.js";
import { loadSpec } from "../src/openapi/load-document.js";
import { type OpenApiDocument } from "../src/openapi/spec.js";

const USAGE = "usage: npm run spec:diff -- OLD.json NEW.json [--json] [--ignore-prefix v2.]";

run(async () => {
  const { values, positionals } = parseArgs({
    options: { json: { type: "boolean", default: false }, "ignore-prefix": { type: "string" } },
    allowPositionals: true,
  });
  if (positionals.length !== 2) throw new UsageError(`expected two spec files, got ${positionals.length}`);
  const [oldSpec, newSpec] = positionals.map(readSpec) as [OpenApiDocument, OpenApiDocument];
  const ignorePrefix = values["ignore-prefix"];
  const diff = diffSpecs(oldSpec, newSpec, ignorePrefix ? { ignorePrefix } : {});
  process.stdout.write(values.json ? formatDiffJson(diff) : formatDiffText(diff));
}, USAGE);

function readSpec(file: string): OpenApiDocument {
  try {
    return loadSpec(file);
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
}
