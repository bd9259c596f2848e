// npm run codegen:check [-- --spec FILE --generated DIR]: exit 1 when generated/ differs from
// what `npm run codegen` would write now. CI runs this so nobody hand-edits generated/.
import { parseArgs } from "node:util";
import { checkGenerated, describeDrift } from "./lib/check.js";
import { run } from "./lib/cli.js";

const USAGE = "usage: npm run codegen:check [-- --spec spec/openapi.json] [--generated generated]";

run(async () => {
  const { values } = parseArgs({
    options: {
      spec: { type: "string", default: "spec/openapi.json" },
      generated: { type: "string", default: "generated" },
    },
  });
  const drift = describeDrift(await checkGenerated(values.spec, values.generated), values.generated, values.spec);
  if (drift) {
    process.stderr.write(drift);
    return 1;
  }
  console.log(`${values.generated}/ is up to date with ${values.spec}`);
  return 0;
}, USAGE);
