// Does the MCP server's heap level off? Many oc_delegate calls (default 5,000, 10 at a time) through
// the built MCP server against a real opencode (the pinned 1.x, or the 2.x test server; scripted
// model), reading the heap it keeps after a full GC (bench/support/heap-probe.mjs) every so often.
// What each task leaves behind (watches, records, maps keyed by session, listeners) shows as growth
// after the warm-up: the figure is the last reading against the one after the first 500 tasks.
// Run: npm run bench:heap [-- --tasks N --every K --parallel P --major 1|2]
import { parseArgs } from "node:util";
import { startOpencode } from "../test/support/opencode.js";
import { startOpencode2 } from "../test/support/opencode2.js";
import { text, times } from "../test/support/scripted-model.js";
import { startMcpChild, type HeapReading } from "./support/mcp-child.js";

const { values } = parseArgs({
  options: {
    tasks: { type: "string", default: "5000" },
    every: { type: "string", default: "500" },
    parallel: { type: "string", default: "10" },
    major: { type: "string", default: "1" },
  },
});
const TASKS = Math.max(1, Number(values.tasks) || 5000);
const EVERY = Math.max(1, Math.min(TASKS, Number(values.every) || 500));
const PARALLEL = Math.max(1, Number(values.parallel) || 10);
const MAJOR = Number(values.major) === 2 ? 2 : 1;

const server = MAJOR === 2 ? await startOpencode2() : await startOpencode();
const mcp = await startMcpChild(server);
try {
  // Two tasks one after the other first: opencode's first catalog read is slow on a busy machine.
  server.model.queue(times(2, text("warm")));
  for (let i = 0; i < 2; i++) await mcp.call("oc_delegate", { task: `warm ${i}`, model: "fake/scripted" });
  const readings: Array<HeapReading & { tasks: number; rssMb: number }> = [];
  let done = 0;
  const t0 = Date.now();
  while (done < TASKS) {
    const batch = Math.min(PARALLEL, TASKS - done);
    server.model.queue(times(batch, text("ok")));
    await Promise.all(
      Array.from({ length: batch }, async (_, i) => {
        const r = await mcp.call("oc_delegate", { task: `task ${done + i}`, model: "fake/scripted" });
        if (r.data.status !== "done") throw new Error(`task ${done + i}: ${String(r.data.status)} ${r.text.slice(0, 300)}`);
      }),
    );
    done += batch;
    if (done % EVERY === 0 || done === TASKS) {
      const reading = await mcp.heapAfterGc();
      readings.push({ tasks: done, ...reading, rssMb: mcp.memory().rssMb });
      console.log(
        `  ${String(done).padStart(6)} tasks: heap after GC ${reading.heapMb.toFixed(2)} MB (compiled code ${reading.codeMb.toFixed(2)} MB, bytecode ${reading.bytecodeMb.toFixed(2)} MB), RSS ${mcp.memory().rssMb.toFixed(0)} MB (${Math.round((Date.now() - t0) / 1000)} s)`,
      );
    }
  }
  const base = readings[0]!;
  const last = readings.at(-1)!;
  const growth = (last.heapMb / base.heapMb - 1) * 100;
  const perTaskKb = last.tasks > base.tasks ? ((last.heapMb - base.heapMb) * 1024) / (last.tasks - base.tasks) : 0;
  console.log(
    `opencode ${MAJOR === 2 ? "2.x" : "1.18.33"}, ${TASKS} oc_delegate ${PARALLEL} at a time: heap after GC ${base.heapMb.toFixed(2)} MB after ${base.tasks}, ${last.heapMb.toFixed(2)} MB after ${last.tasks}: ${growth >= 0 ? "+" : ""}${growth.toFixed(1)} % (${perTaskKb.toFixed(2)} KB a task); RSS peak ${mcp.memory().peakMb.toFixed(0)} MB`,
  );
  const codeKb = (last.codeMb + last.bytecodeMb - base.codeMb - base.bytecodeMb) * 1024;
  console.log(`  of the growth, V8's compiled code and bytecode: ${codeKb >= 0 ? "+" : ""}${codeKb.toFixed(0)} KB`);
} finally {
  await mcp.close();
  await server.stop();
}
