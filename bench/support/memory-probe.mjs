// Loaded into the MCP server a benchmark starts when BENCH_MEMORY_FILE is set (mcp-child.ts adds
// `--import <this>`): what the resident memory is made of, for looking into a bench:scale RSS figure.
// Every 100 ms it reads RSS; when RSS has risen by at least 1 MB since the last written sample it
// writes that sample (the process's peak, broken down) to BENCH_MEMORY_FILE.peak.json; every 500 ms
// it appends one to BENCH_MEMORY_FILE.log.jsonl (the course of a run). Each sample holds process.memoryUsage(),
// V8's heap spaces (used / committed) and /proc/self/smaps_rollup, and it costs no GC (a GC would
// change what is measured).
import { appendFileSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import process from "node:process";
import { setInterval } from "node:timers";
import { getHeapSpaceStatistics } from "node:v8";

const file = process.env.BENCH_MEMORY_FILE;
const mb = (bytes) => Math.round((bytes / 2 ** 20) * 10) / 10;

function sample() {
  const usage = Object.fromEntries(Object.entries(process.memoryUsage()).map(([k, v]) => [k, mb(v)]));
  const spaces = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, { used: mb(s.space_used_size), committed: mb(s.physical_space_size) }]));
  const rollup = {};
  for (const line of readFileSync("/proc/self/smaps_rollup", "utf8").split("\n")) {
    const m = /^(\w+):\s+(\d+) kB/.exec(line);
    if (m) rollup[m[1]] = mb(Number(m[2]) * 1024);
  }
  return { at: Date.now(), usage, spaces, rollup };
}

function write(suffix, value) {
  const target = `${file}.${suffix}.json`;
  writeFileSync(`${target}.part`, JSON.stringify(value, null, 1));
  renameSync(`${target}.part`, target); // whole or not at all for the reader
}

if (file) {
  let written = 0;
  setInterval(() => {
    const rss = process.memoryUsage.rss();
    if (rss < written + 2 ** 20) return;
    written = rss;
    write("peak", sample());
  }, 100).unref();
  setInterval(() => appendFileSync(`${file}.log.jsonl`, `${JSON.stringify(sample())}\n`), 500).unref();
}
