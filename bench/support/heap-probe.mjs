// Loaded into the MCP server a benchmark starts (`node --expose-gc --import <this> dist/cli.js`):
// on SIGUSR2 it collects garbage and writes the process's memory figures to BENCH_HEAP_FILE, so the
// benchmark can read the heap a real server keeps after a full GC without changing the server.
import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { setTimeout } from "node:timers";
import { getHeapCodeStatistics, getHeapSpaceStatistics, writeHeapSnapshot } from "node:v8";

const file = process.env.BENCH_HEAP_FILE;
const snapshots = process.env.BENCH_HEAP_SNAPSHOTS;
let readings = 0;
if (file) {
  process.on("SIGUSR2", () => {
    globalThis.gc?.();
    // What a FinalizationRegistry holds for an object just collected (undici keeps one entry per
    // fetch) is released by its cleanup task, which runs after the GC: let it, then collect again.
    setTimeout(() => {
      globalThis.gc?.();
      globalThis.gc?.();
      // Compiled code and bytecode apart from the objects: growth there is V8 compiling, not something kept.
      const code = getHeapCodeStatistics();
      const codeSpace = getHeapSpaceStatistics().find((s) => s.space_name === "code_space")?.space_used_size ?? 0;
      writeFileSync(
        `${file}.part`,
        JSON.stringify({ ...process.memoryUsage(), codeSpace, code: code.code_and_metadata_size, bytecode: code.bytecode_and_metadata_size, at: Date.now() }),
      );
      renameSync(`${file}.part`, file); // whole or not at all for the reader
      if (snapshots) writeHeapSnapshot(join(snapshots, `heap-${String(++readings).padStart(3, "0")}.heapsnapshot`));
    }, 200);
  });
}
