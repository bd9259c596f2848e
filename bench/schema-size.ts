// How much context the tool list costs every client: the JSON size of tools/list per configuration.
// Exits non-zero when the default toolsets list above their budget (src/mcp/listing/budget.ts).
import { TOOLS_LIST_BUDGET_CHARS } from "../src/mcp/listing/budget.js";
import { listedTools } from "../src/mcp/listing/listed-tools.js";

const configs: Array<[string, NodeJS.ProcessEnv]> = [
  ["default toolsets", {}],
  ["all toolsets", { OPENCODE_CONDUCTOR_TOOLSETS: "all" }],
  ["read-only", { OPENCODE_CONDUCTOR_READ_ONLY: "1" }],
  ["delegate only", { OPENCODE_CONDUCTOR_TOOLSETS: "delegate" }],
];

let defaultChars = 0;
for (const [name, env] of configs) {
  const tools = await listedTools(env);
  const chars = JSON.stringify({ tools }).length;
  if (name === "default toolsets") defaultChars = chars;
  const largest = tools
    .map((t) => [t.name, JSON.stringify(t).length] as const)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([n, c]) => `${n} ${c}`)
    .join(", ");
  console.log(`${name.padEnd(18)} ${String(tools.length).padStart(2)} tools  ${String(chars).padStart(6)} chars  (largest: ${largest})`);
}
const within = defaultChars <= TOOLS_LIST_BUDGET_CHARS;
console.log(`\nDefault toolsets: ${defaultChars} of the ${TOOLS_LIST_BUDGET_CHARS}-character budget${within ? "" : ": OVER BUDGET"}.`);
if (!within) process.exitCode = 1;
