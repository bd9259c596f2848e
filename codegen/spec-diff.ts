// npm run spec:diff -- OLD.json NEW.json [--json]: what an opencode upgrade adds, removes and
// changes in the API, operation by operation. Exit 0 whether or not there are differences;
// exit 2 on bad usage or an unreadable spec.
import { parseArgs } from "node:util";
import { run, UsageError } from "./lib/cli.js";
import { diffSpecs } from "./lib/diff.js";
import { formatDiffJson, formatDiffText } from "./lib/diff-format.js";
import { loadSpec, type OpenApiDocument } from "./lib/spec.js";

const USAGE = "usage: npm run spec:diff -- OLD.json NEW.json [--json]";

run(async () => {
  const { values, positionals } = parseArgs({
    options: { json: { type: "boolean", default: false } },
    allowPositionals: true,
  });
  if (positionals.length !== 2) throw new UsageError(`expected two spec files, got ${positionals.length}`);
  const [oldSpec, newSpec] = positionals.map(readSpec) as [OpenApiDocument, OpenApiDocument];
  const diff = diffSpecs(oldSpec, newSpec);
  process.stdout.write(values.json ? formatDiffJson(diff) : formatDiffText(diff));
}, USAGE);

function readSpec(file: string): OpenApiDocument {
  try {
    return loadSpec(file);
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
}
