// How long each oc_api / oc_api_ops call keeps the event loop busy, for the oversized inputs the
// unit test checks (test/support/api-large-inputs.ts): the longest stall seen by
// perf_hooks.monitorEventLoopDelay around each call, cold (first calls on the server's spec) and warm.
// Target: no call stalls the loop for 50 ms or more. Run: npm run bench:stall [-- --runs N]
import { monitorEventLoopDelay } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { LARGE_INPUTS, liveSpecApiMcp } from "../test/support/api-large-inputs.js";

const TARGET_MS = 50;
const { values } = parseArgs({ options: { runs: { type: "string", default: "3" } } });
const runs = Math.max(1, Number(values.runs) || 3);

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The longest event-loop stall (ms) while `fn` runs. */
async function stallOf(fn: () => Promise<unknown>): Promise<number> {
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  await tick(20); // the monitor's first tick only sets its baseline
  await fn();
  await tick(20); // one more turn, so a stall at the very end is sampled too
  histogram.disable();
  return histogram.max / 1e6;
}

// The monitor must see a deliberate 100 ms stall, or its figures mean nothing.
const calibration = await stallOf(async () => {
  const end = Date.now() + 100;
  while (Date.now() < end);
});
console.log(`monitor check: a 100 ms busy loop reads ${calibration.toFixed(1)} ms`);

const tools = await liveSpecApiMcp();
const stalls = LARGE_INPUTS.map(() => [] as number[]);
for (let run = 0; run < runs; run++) {
  for (const [i, [, tool, args]] of LARGE_INPUTS.entries()) stalls[i]!.push(await stallOf(() => tools.call(tool, args)));
}
await tools.close();

console.log(`\nlongest stall per call (ms), run 1 is cold; target < ${TARGET_MS} ms`);
let over = 0;
for (const [i, [label]] of LARGE_INPUTS.entries()) {
  const worst = Math.max(...stalls[i]!);
  if (worst >= TARGET_MS) over += 1;
  const figures = stalls[i]!.map((ms) => ms.toFixed(1).padStart(6)).join(" ");
  console.log(`${label.slice(0, 72).padEnd(72)} ${figures}${worst >= TARGET_MS ? "  over target" : ""}`);
}
console.log(
  `\n${over === 0 ? "all" : `${LARGE_INPUTS.length - over} of ${LARGE_INPUTS.length}`} calls under ${TARGET_MS} ms (${runs} runs; a loaded machine adds its own stalls)`,
);
