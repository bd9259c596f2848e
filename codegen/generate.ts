// npm run codegen [-- --spec FILE --out DIR]: regenerate generated/ from spec/openapi.json (1.x)
// and generated/v2/ from spec/v2/openapi.json (2.x); with --spec/--out, just that one pair.
import { parseArgs } from "node:util";
import { run } from "./lib/cli.js";
import { writeGenerated } from "./lib/generate.js";
import { targetsFrom } from "./lib/targets.js";

const USAGE = "usage: npm run codegen [-- --spec spec/openapi.json] [--out generated]";

run(async () => {
  const { values } = parseArgs({ options: { spec: { type: "string" }, out: { type: "string" } } });
  for (const target of targetsFrom(values.spec, values.out)) {
    const files = await writeGenerated(target.spec, target.out);
    console.log(`generated ${files.map((f) => `${target.out}/${f}`).join(", ")} from ${target.spec}`);
  }
}, USAGE);
