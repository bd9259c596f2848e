// npm run codegen:check [-- --spec FILE --generated DIR]: exit 1 when generated/ (or generated/v2/)
// differs from what `npm run codegen` would write now. CI runs this so nobody hand-edits generated/.
import { parseArgs } from "node:util";
import { checkGenerated, describeDrift } from "./lib/check.js";
import { run } from "./lib/cli.js";
import { targetsFrom } from "./lib/targets.js";

const USAGE = "usage: npm run codegen:check [-- --spec spec/openapi.json] [--generated generated]";

run(async () => {
  const { values } = parseArgs({ options: { spec: { type: "string" }, generated: { type: "string" } } });
  let failed = false;
  for (const target of targetsFrom(values.spec, values.generated)) {
    const drift = describeDrift(await checkGenerated(target.spec, target.out), target.out, target.spec);
    if (drift) {
      process.stderr.write(drift);
      failed = true;
    } else console.log(`${target.out}/ is up to date with ${target.spec}`);
  }
  return failed ? 1 : 0;
}, USAGE);
