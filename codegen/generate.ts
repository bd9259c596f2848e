// npm run codegen [-- --spec FILE --out DIR]: regenerate generated/ from spec/.
import { parseArgs } from "node:util";
import { run } from "./lib/cli.js";
import { writeGenerated } from "./lib/generate.js";

const USAGE = "usage: npm run codegen [-- --spec spec/openapi.json] [--out generated]";

run(async () => {
  const { values } = parseArgs({
    options: {
      spec: { type: "string", default: "spec/openapi.json" },
      out: { type: "string", default: "generated" },
    },
  });
  const files = await writeGenerated(values.spec, values.out);
  console.log(`generated ${files.map((f) => `${values.out}/${f}`).join(", ")} from ${values.spec}`);
}, USAGE);
